/**
 * Pure helpers of the zones and lines editor (no DOM): the rules as the console edits them, pointer positions
 * as normalized image coordinates, and where an event sits on the timeline.
 */

export type Point = [number, number];

/** A zone as GET rules answers it (every default filled in); the editor changes only `polygon`. */
export interface ZoneRule {
  id: string;
  name?: string;
  polygon: Point[];
  [field: string]: unknown;
}

export interface LineRule {
  id: string;
  name?: string;
  start: Point;
  end: Point;
  [field: string]: unknown;
}

export interface Rules {
  zones: ZoneRule[];
  lines: LineRule[];
}

/** A point of the picture under a pointer at (x, y) in a box of this size, in [0, 1], 4 decimals. */
export function normalizedAt(
  x: number,
  y: number,
  box: { left: number; top: number; width: number; height: number },
): Point {
  const clamp = (v: number) => Math.round(Math.min(1, Math.max(0, v)) * 10_000) / 10_000;
  return [clamp((x - box.left) / box.width), clamp((y - box.top) / box.height)];
}

/** An id of the form `<prefix>-<n>` not used by any zone or line yet. */
export function freshId(rules: Rules, prefix: 'zone' | 'line'): string {
  const used = new Set([...rules.zones, ...rules.lines].map((r) => r.id));
  let n = 1;
  while (used.has(`${prefix}-${n}`)) n++;
  return `${prefix}-${n}`;
}

/** The `points` attribute of a polygon in a 0..1 viewBox. */
export const pointsAttr = (poly: readonly Point[]): string => poly.map(([x, y]) => `${x},${y}`).join(' ');

/** Where a media time sits on a timeline of `durationMs`, as a percentage in [0, 100]. */
export function timelinePercent(mediaMs: number, durationMs: number): number {
  if (!(durationMs > 0)) return 0;
  return Math.min(100, Math.max(0, (mediaMs / durationMs) * 100));
}

/** `label=n` pairs of a count map, `*` first; `-` when empty. */
export function countsText(counts: Record<string, number>): string {
  const keys = Object.keys(counts).sort((a, b) =>
    a === '*' ? -1 : b === '*' ? 1 : a < b ? -1 : a > b ? 1 : 0,
  );
  return keys.length ? keys.map((k) => `${k === '*' ? 'all' : k} ${counts[k]}`).join(', ') : '-';
}
