import type { Counts } from '@vision/shared';
import type { AnalyticsEvent, EndReason, EventContext } from './events';
import type { LineRule, RuleSet, ZoneRule } from '@vision/shared';
import {
  filterKey,
  frameCandidates,
  viewOf,
  type AnalyticsFrame,
  type EngineGeometry,
  type FrameView,
  type ZoneMarks,
} from './frame-input';
import type { LineCrossingsState } from './line-crossings';
import {
  LineRuntime,
  ZoneRuntime,
  type LineSummary,
  type ZoneRuntimeState,
  type ZoneSummary,
} from './rule-runtime';

/**
 * The analytics engine of one task: it runs a rule set (rules.ts) over the task's result frames, in seq
 * order, on media time only (docs/ANALYTICS.md, "Exact rules"). Pure: no clock, no randomness, no I/O. The
 * same rules over the same frames give byte-identical outputs and event ids, and `snapshot()` is a plain JSON
 * value from which `AnalyticsEngine.restore`, given the same rules, continues exactly as if never stopped. A
 * snapshot holds the rules' state, never the rules: its size grows with the tracks followed, not with the rules.
 *
 * - A frame whose seq is not above the last processed one is skipped (a redelivery): `skipped: true`.
 * - Media time is max(frame.time_ms, the previous frame's media time): it never runs backwards.
 * - An object is watched by a rule when its label is in `labels` (absent or empty: every label) and its score
 *   is >= `min_score`. Zones and lines follow tracks by `track_id`; an object without one takes part only in
 *   coverage zones. When a track id appears twice in a frame, its first object is used.
 * - Geometry: every rule is decided on the frame's pixels (frame-input.ts, `EngineGeometry`).
 */
export interface FrameAnalytics {
  seq: number;
  media_ms: number;
  skipped: boolean;
  events: AnalyticsEvent[];
  /** For each object of the frame, in order: the ids of the zones it is counted in. */
  objects: { zones: string[] }[];
  /** Per zone: its occupancy by label (`*`: all) after this frame, and a coverage zone's covered fraction. */
  zones: Record<string, { counts: Counts; coverage?: number }>;
}

export interface AnalyticsSummary {
  task_id: string;
  rules_version: number;
  /** The last frame processed; null before the first. */
  as_of_seq: number | null;
  media_ms: number | null;
  rules: (ZoneSummary | LineSummary)[];
}

export interface EngineSnapshot {
  format: 1;
  task_id: string;
  rules_version: number;
  as_of_seq: number | null;
  media_ms: number | null;
  /** Absent in snapshots stored before the engine decided on pixels: 'normalized'. */
  geometry?: EngineGeometry;
  /** Rule id -> the rules version its current definition came with. */
  versions: [string, number][];
  zones: [string, ZoneRuntimeState][];
  lines: [string, LineCrossingsState][];
}

type Runtime = ZoneRuntime | LineRuntime;

/** A rule's definition for the unchanged-or-not test: everything but its name, labels as a set. */
function definitionKey(kind: string, rule: ZoneRule | LineRule): string {
  const { name: _name, labels, ...rest } = rule;
  return JSON.stringify([kind, [...new Set(labels ?? [])].sort(), rest]);
}

export class AnalyticsEngine {
  private runtimes: Runtime[] = [];
  /** For each runtime: the index of its filter among the distinct filters, and its event context. */
  private filterOf: number[] = [];
  private filterCount = 0;
  private contexts: EventContext[] = [];
  private version = 0;
  private asOfSeq: number | null = null;
  private mediaMs: number | null = null;

  private constructor(
    readonly taskId: string,
    readonly geometry: EngineGeometry,
  ) {}

  /**
   * A new engine at rules version `version` (1 unless the task's rules were set before results saw any of its
   * frames under another version). `rules` comes from parseRules. `geometry`: 'pixels' unless the engine must
   * give what an evaluation stored under 'normalized' gave.
   */
  static create(
    taskId: string,
    rules: RuleSet,
    version = 1,
    geometry: EngineGeometry = 'pixels',
  ): AnalyticsEngine {
    if (!Number.isSafeInteger(version) || version < 1) throw new Error(`invalid rules version ${version}`);
    const engine = new AnalyticsEngine(taskId, geometry);
    engine.version = version;
    engine.setRuntimes([
      ...rules.zones.map((z) => new ZoneRuntime(z, version)),
      ...rules.lines.map((l) => new LineRuntime(l, version)),
    ]);
    return engine;
  }

  /**
   * The engine a snapshot was taken of, running `rules` (from parseRules): the rules it ran when the snapshot
   * was taken, which the snapshot refers to by its version and does not hold.
   */
  static restore(snapshot: EngineSnapshot, rules: RuleSet): AnalyticsEngine {
    if (snapshot.format !== 1)
      throw new Error(`unknown analytics snapshot format ${String(snapshot.format)}`);
    const versions = new Map(snapshot.versions);
    const zones = new Map(snapshot.zones);
    const lines = new Map(snapshot.lines);
    const geometry = snapshot.geometry ?? 'normalized';
    if (geometry !== 'pixels' && geometry !== 'normalized')
      throw new Error(`unknown analytics geometry ${String(geometry)}`);
    const engine = new AnalyticsEngine(snapshot.task_id, geometry);
    engine.version = snapshot.rules_version;
    engine.asOfSeq = snapshot.as_of_seq;
    engine.mediaMs = snapshot.media_ms;
    const v = (id: string): number => versions.get(id) ?? snapshot.rules_version;
    engine.setRuntimes([
      ...rules.zones.map((z) => new ZoneRuntime(z, v(z.id), zones.get(z.id))),
      ...rules.lines.map((l) => new LineRuntime(l, v(l.id), lines.get(l.id))),
    ]);
    return engine;
  }

  get rulesVersion(): number {
    return this.version;
  }

  /** The seq of the last frame processed; null before the first. */
  get lastSeq(): number | null {
    return this.asOfSeq;
  }

  get rules(): RuleSet {
    return {
      zones: this.runtimes.flatMap((r) => (r instanceof ZoneRuntime ? [r.rule] : [])),
      lines: this.runtimes.flatMap((r) => (r instanceof LineRuntime ? [r.rule] : [])),
    };
  }

  private context(rt: Runtime, seq: number, mediaMs: number): EventContext {
    return { taskId: this.taskId, ruleId: rt.rule.id, ruleVersion: rt.version, seq, mediaMs };
  }

  /** Runs `runtimes` from now on: which of them share a view of a frame, and a context each (set per frame). */
  private setRuntimes(runtimes: Runtime[]): void {
    const filters = new Map<string, number>();
    this.runtimes = runtimes;
    this.filterOf = runtimes.map((rt) => {
      const key = filterKey(rt.rule);
      const known = filters.get(key);
      if (known !== undefined) return known;
      filters.set(key, filters.size);
      return filters.size - 1;
    });
    this.filterCount = filters.size;
    this.contexts = runtimes.map((rt) => this.context(rt, 0, 0));
  }

  processFrame(frame: AnalyticsFrame): FrameAnalytics {
    if (this.asOfSeq !== null && frame.seq <= this.asOfSeq) {
      const objects = frame.objects.map(() => ({ zones: [] as string[] }));
      return {
        seq: frame.seq,
        media_ms: this.mediaMs ?? frame.time_ms,
        skipped: true,
        events: [],
        objects,
        zones: {},
      };
    }
    const t = this.mediaMs === null ? frame.time_ms : Math.max(this.mediaMs, frame.time_ms);
    this.asOfSeq = frame.seq;
    this.mediaMs = t;
    const { size, candidates } = frameCandidates(frame, this.geometry);
    const events: AnalyticsEvent[] = [];
    const zones: FrameAnalytics['zones'] = {};
    const views = new Array<FrameView | undefined>(this.filterCount);
    const marks: ZoneMarks = new Array<string[] | undefined>(frame.objects.length);
    for (let i = 0; i < this.runtimes.length; i++) {
      const rt = this.runtimes[i];
      const view = (views[this.filterOf[i]] ??= viewOf(candidates, rt.rule));
      const ctx = this.contexts[i];
      ctx.seq = frame.seq;
      ctx.mediaMs = t;
      if (rt instanceof ZoneRuntime) {
        rt.step(ctx, view, size, events, marks);
        zones[rt.rule.id] = rt.frameCounts();
      } else {
        rt.step(ctx, view, size, events);
      }
    }
    const objects = frame.objects.map((_, i) => ({ zones: marks[i] ?? [] }));
    return { seq: frame.seq, media_ms: t, skipped: false, events, objects, zones };
  }

  /**
   * Replaces the rule set (a new rules version). A rule with the same id and kind whose definition is unchanged
   * (its name may change) keeps its state and version. A changed or removed zone ends its open visits
   * (zone.exited) and clears its raised occupancy alerts (zone.occupancy_cleared), with reason rule_changed or
   * rule_removed, at the last processed frame's seq and media time, under the old rule version; a changed or
   * removed line emits nothing and its counts end. Changed and new rules start empty under the new version:
   * `version`, this version + 1 unless the task's rules store numbers its versions (it must be above this one).
   */
  replaceRules(next: RuleSet, version = this.version + 1): AnalyticsEvent[] {
    if (!Number.isSafeInteger(version) || version <= this.version)
      throw new Error(`rules version ${version} is not above ${this.version}`);
    const events: AnalyticsEvent[] = [];
    const keep = new Map<string, Runtime>();
    const nextById = new Map<string, [string, ZoneRule | LineRule]>([
      ...next.zones.map((z): [string, [string, ZoneRule]] => [z.id, ['zone', z]]),
      ...next.lines.map((l): [string, [string, LineRule]] => [l.id, ['line', l]]),
    ]);
    for (const rt of this.runtimes) {
      const n = nextById.get(rt.rule.id);
      if (n && definitionKey(n[0], n[1]) === definitionKey(rt.kind, rt.rule)) {
        rt.rule = { ...rt.rule, name: n[1].name } as typeof rt.rule;
        keep.set(rt.rule.id, rt);
        continue;
      }
      const reason: EndReason = n ? 'rule_changed' : 'rule_removed';
      if (this.asOfSeq !== null && this.mediaMs !== null)
        events.push(
          ...(rt instanceof ZoneRuntime
            ? rt.end(this.context(rt, this.asOfSeq, this.mediaMs), reason)
            : rt.end()),
        );
    }
    this.setRuntimes([
      ...next.zones.map((z) => (keep.get(z.id) as ZoneRuntime | undefined) ?? new ZoneRuntime(z, version)),
      ...next.lines.map((l) => (keep.get(l.id) as LineRuntime | undefined) ?? new LineRuntime(l, version)),
    ]);
    this.version = version;
    return events;
  }

  analytics(): AnalyticsSummary {
    return {
      task_id: this.taskId,
      rules_version: this.version,
      as_of_seq: this.asOfSeq,
      media_ms: this.mediaMs,
      rules: this.runtimes.map((rt) => rt.summary()),
    };
  }

  snapshot(): EngineSnapshot {
    return {
      format: 1,
      task_id: this.taskId,
      rules_version: this.version,
      as_of_seq: this.asOfSeq,
      media_ms: this.mediaMs,
      geometry: this.geometry,
      versions: this.runtimes.map((rt) => [rt.rule.id, rt.version]),
      zones: this.runtimes.flatMap((rt) =>
        rt instanceof ZoneRuntime ? [[rt.rule.id, rt.snapshot()] as [string, ZoneRuntimeState]] : [],
      ),
      lines: this.runtimes.flatMap((rt) =>
        rt instanceof LineRuntime ? [[rt.rule.id, rt.snapshot()] as [string, LineCrossingsState]] : [],
      ),
    };
  }
}
