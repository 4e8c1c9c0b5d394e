import type { ZoneRule } from '@vision/shared';

/**
 * Dwell times of ended visits, kept in bounded memory: a count per bucket, exact below 128 ms, above that 64
 * buckets per power of two, so a percentile is reported within 1/64 (1.6 %) of the true value (the bucket's
 * upper bound, never above the exact maximum). Integer arithmetic only: the same visits give the same figures.
 * The state is a plain JSON object (bucket index -> count).
 */
export interface DwellStats {
  count: number;
  max: number;
  buckets: Record<string, number>;
}

const SUB = 64;

export function emptyDwellStats(): DwellStats {
  return { count: 0, max: 0, buckets: {} };
}

function bucketOf(ms: number): number {
  const v = Math.max(0, Math.floor(ms));
  if (v < 2 * SUB) return v;
  const exp = Math.floor(Math.log2(v)); // v >= 128, so exp >= 7
  // Math.log2 can round up at exact powers of two minus a little: correct it with integer checks.
  const e = 2 ** exp > v ? exp - 1 : 2 ** (exp + 1) <= v ? exp + 1 : exp;
  const step = 2 ** (e - 6);
  return 2 * SUB + (e - 7) * SUB + Math.floor((v - 2 ** e) / step);
}

function upperOf(bucket: number): number {
  if (bucket < 2 * SUB) return bucket;
  const e = Math.floor((bucket - 2 * SUB) / SUB) + 7;
  const k = (bucket - 2 * SUB) % SUB;
  const step = 2 ** (e - 6);
  return 2 ** e + (k + 1) * step - 1;
}

export function addDwell(stats: DwellStats, ms: number): void {
  const b = String(bucketOf(ms));
  stats.buckets[b] = (stats.buckets[b] ?? 0) + 1;
  stats.count += 1;
  if (ms > stats.max) stats.max = ms;
}

/** Nearest-rank percentile (the smallest value with at least ceil(p·n/100) values at or below it). */
export function dwellPercentile(stats: DwellStats, p: number): number | null {
  if (stats.count === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * stats.count));
  const keys = Object.keys(stats.buckets)
    .map(Number)
    .sort((a, b) => a - b);
  let seen = 0;
  for (const k of keys) {
    seen += stats.buckets[String(k)];
    if (seen >= rank) return Math.min(upperOf(k), stats.max);
  }
  return stats.max;
}

/** An open visit of a zone: a track's, or a coverage zone's active period. */
export interface Visit {
  id: string;
  label: string;
  start_ms: number;
  last_inside_ms: number;
  dwell_alerted: boolean;
}

/** The visit's dwell once it reaches the rule's limit for the first time (marking it alerted); else undefined. */
export function dwellDue(rule: ZoneRule, visit: Visit): number | undefined {
  const limit = rule.dwell_limit_ms;
  const dwell = visit.last_inside_ms - visit.start_ms;
  if (limit === undefined || visit.dwell_alerted || dwell < limit) return undefined;
  visit.dwell_alerted = true;
  return dwell;
}
