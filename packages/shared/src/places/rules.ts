import { z } from 'zod';
import { ANCHORS, isSimplePolygon, polygonArea, type Point } from './geometry';

/**
 * The rules of a task's places: zones (polygons) and lines (segments), in normalized image coordinates.
 * `parseRules` validates a rule set and returns either the rules with every default filled in, or an error
 * the HTTP layer turns into a 400 OP-TASK-REQUEST-INVALID (as `strictBody` does: `unknown_field` with
 * `fields`, any other problem `invalid_field` with `field`). Limits are in RULE_LIMITS and docs/ANALYTICS.md.
 */
export const RULE_LIMITS = {
  /** Zones and lines together, per task. */
  maxRules: 20,
  maxVertices: 32,
  maxLabels: 50,
  maxOccupancyThresholds: 16,
  /** Largest time any rule waits for (enter, exit, dwell, hysteresis): one day of media time. */
  maxMs: 86_400_000,
  maxLostGraceMs: 60_000,
  maxOccupancy: 10_000,
  /** A polygon's area must be at least this (normalized units²: this fraction of any image's area). */
  minPolygonArea: 1e-6,
  /**
   * A line must be at least this long (normalized units: the image is not known when rules are validated). On
   * any image it is at least this fraction of the shorter side long, so its strip is always defined.
   */
  minLineLength: 1e-3,
  /**
   * The largest rule set, in bytes of its JSON as stored (UTF-8, every default filled in): the same bound on
   * every path that takes rules (JSON and multipart creation, PUT rules, replay), and what a replay request
   * carries beside its cursor.
   */
  maxBytes: 65_536,
} as const;

export const RULE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** True for text with no control character and no lone surrogate (what Postgres stores as text). */
function plainText(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || (c >= 0xdc00 && c <= 0xdfff)) return false;
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
      i++;
    }
  }
  return true;
}
const finite = z.number().finite();
const unit = finite.min(0).max(1);
const ms = (max: number) => z.number().int().min(0).max(max);
const point = z.tuple([unit, unit]);
const ruleId = z
  .string()
  .regex(RULE_ID_PATTERN, 'must be 1-64 characters of A-Z a-z 0-9 _ . - starting with a letter or digit');
/** A name or a label: stored as text, so no control character (Postgres refuses NUL in text) and no lone surrogate. */
const text = z.string().min(1).max(200).refine(plainText, 'must not hold control characters');
const label = text;

const common = {
  id: ruleId,
  name: text.optional(),
  labels: z.array(label).max(RULE_LIMITS.maxLabels).optional(),
  min_score: unit.default(0),
  anchor: z.enum(ANCHORS).default('bottom_center'),
};

const occupancySchema = z
  .object({
    /** `*` counts every watched label together. */
    label,
    over: z.number().int().min(0).max(RULE_LIMITS.maxOccupancy),
    under: z
      .number()
      .int()
      .min(1)
      .max(RULE_LIMITS.maxOccupancy + 1)
      .optional(),
    hysteresis_ms: ms(RULE_LIMITS.maxMs).default(0),
  })
  .strict()
  .superRefine((o, ctx) => {
    if (o.under !== undefined && o.under > o.over + 1)
      ctx.addIssue({ code: 'custom', path: ['under'], message: 'must be at most over + 1' });
  });

export const zoneSchema = z
  .object({
    ...common,
    polygon: z.array(point).min(3).max(RULE_LIMITS.maxVertices),
    enter_ms: ms(RULE_LIMITS.maxMs).default(0),
    exit_ms: ms(RULE_LIMITS.maxMs).default(0),
    dwell_limit_ms: z.number().int().min(1).max(RULE_LIMITS.maxMs).optional(),
    lost_grace_ms: ms(RULE_LIMITS.maxLostGraceMs).default(1000),
    switch_distance: finite.min(0).max(1).default(0.05),
    coverage: finite.gt(0).max(1).optional(),
    occupancy: z.array(occupancySchema).max(RULE_LIMITS.maxOccupancyThresholds).optional(),
  })
  .strict()
  .superRefine((zone, ctx) => {
    const poly = zone.polygon as Point[];
    if (!isSimplePolygon(poly))
      ctx.addIssue({
        code: 'custom',
        path: ['polygon'],
        message: 'must not intersect itself or repeat a vertex',
      });
    else if (polygonArea(poly) < RULE_LIMITS.minPolygonArea)
      ctx.addIssue({ code: 'custom', path: ['polygon'], message: 'has (almost) zero area' });
    if (zone.coverage !== undefined && zone.occupancy !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['occupancy'],
        message: 'a coverage zone has no occupancy thresholds',
      });
    const seen = new Set<string>();
    (zone.occupancy ?? []).forEach((o, i) => {
      if (seen.has(o.label))
        ctx.addIssue({ code: 'custom', path: ['occupancy', i, 'label'], message: 'duplicate label' });
      seen.add(o.label);
    });
  });

export const lineSchema = z
  .object({
    ...common,
    start: point,
    end: point,
    hysteresis_ms: ms(RULE_LIMITS.maxMs).default(0),
  })
  .strict()
  .superRefine((line, ctx) => {
    if (Math.hypot(line.end[0] - line.start[0], line.end[1] - line.start[1]) < RULE_LIMITS.minLineLength)
      ctx.addIssue({
        code: 'custom',
        path: ['end'],
        message: `line must be at least ${RULE_LIMITS.minLineLength} long`,
      });
  });

export const ruleSetSchema = z
  .object({
    zones: z.array(zoneSchema).max(RULE_LIMITS.maxRules).default([]),
    lines: z.array(lineSchema).max(RULE_LIMITS.maxRules).default([]),
  })
  .strict()
  .superRefine((set, ctx) => {
    if (set.zones.length + set.lines.length > RULE_LIMITS.maxRules)
      ctx.addIssue({
        code: 'custom',
        path: ['zones'],
        message: `at most ${RULE_LIMITS.maxRules} zones and lines together`,
      });
    const ids = new Set<string>();
    for (const [kind, rules] of [
      ['zones', set.zones],
      ['lines', set.lines],
    ] as const)
      rules.forEach((r, i) => {
        if (ids.has(r.id))
          ctx.addIssue({ code: 'custom', path: [kind, i, 'id'], message: `duplicate rule id ${r.id}` });
        ids.add(r.id);
      });
  });

/** What a caller sends (defaults optional). */
export type RuleSetInput = z.input<typeof ruleSetSchema>;
/** A validated rule set, every default filled in. */
export type RuleSet = z.output<typeof ruleSetSchema>;
export type ZoneRule = z.output<typeof zoneSchema>;
export type LineRule = z.output<typeof lineSchema>;
export type OccupancyThreshold = z.output<typeof occupancySchema>;

/** A refusal, in the shape of the API's 400 `details` (reason `unknown_field` or `invalid_field`). */
export interface RulesError {
  reason: 'unknown_field' | 'invalid_field';
  message: string;
  details: { field: string } | { fields: string[] };
}

export type ParseRulesResult = { ok: true; rules: RuleSet } | { ok: false; error: RulesError };

/** The bytes a rule set takes as stored: its JSON in UTF-8 (the measure of RULE_LIMITS.maxBytes). */
export function ruleSetBytes(rules: RuleSet): number {
  return Buffer.byteLength(JSON.stringify(rules));
}

/** Validates a rule set (the `zones` and `lines` of a request). Never throws. */
export function parseRules(input: unknown): ParseRulesResult {
  const r = ruleSetSchema.safeParse(input);
  if (r.success) {
    const bytes = ruleSetBytes(r.data);
    if (bytes <= RULE_LIMITS.maxBytes) return { ok: true, rules: r.data };
    const field = r.data.zones.length > 0 ? 'zones' : 'lines';
    return {
      ok: false,
      error: {
        reason: 'invalid_field',
        message: `Invalid field ${field}: the rule set is ${bytes} bytes, at most ${RULE_LIMITS.maxBytes}`,
        details: { field },
      },
    };
  }
  const unknown = r.error.issues.find((i) => i.code === 'unrecognized_keys');
  if (unknown && unknown.code === 'unrecognized_keys') {
    const fields = unknown.keys.map((k) => [...unknown.path, k.slice(0, 64)].join('.'));
    return {
      ok: false,
      error: {
        reason: 'unknown_field',
        message: `Unknown field(s): ${fields.join(', ')}`,
        details: { fields },
      },
    };
  }
  const first = r.error.issues[0];
  const field = first.path.join('.');
  return {
    ok: false,
    error: {
      reason: 'invalid_field',
      message: `Invalid field ${field}: ${first.message}`,
      details: { field },
    },
  };
}
