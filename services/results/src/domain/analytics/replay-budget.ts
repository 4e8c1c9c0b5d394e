import type { RuleSet } from '@vision/shared';

/**
 * What a replay may spend (docs/ANALYTICS-REPLAY.md), in work units: a frame costs, for each
 * of its objects and once more for the frame itself, the sum over the rules of a zone's vertices (four times as
 * many for a coverage zone, whose step intersects boxes with the polygon) and 2 for a line. The count is of the
 * rules and the frames alone, so the same request always ends at the same frame, whatever the machine's load.
 * Measured on the development machine, a unit costs 5 to 25 ns (the most with one object per frame).
 */
export function workPerObject(rules: RuleSet): number {
  let units = 0;
  for (const z of rules.zones) units += z.polygon.length * (z.coverage === undefined ? 1 : 4);
  return units + 2 * rules.lines.length;
}

/** The units one frame of `objects` objects costs under rules of `perObject` units. */
export function frameWork(perObject: number, objects: number): number {
  return Math.max(1, perObject) * (1 + objects);
}

/**
 * Units one replay request spends at most: a page ends at the frame that reaches it (never before its first
 * frame) and hands back its cursor: at most about 0.25 s of one core, whatever the rules.
 */
export const REPLAY_WORK_BUDGET = 10_000_000;

/**
 * Units evaluated between two yields to the event loop, by a replay and by the ingest's evaluation alike, so that
 * other calls are served meanwhile (1 to 5 ms).
 */
export const SLICE_WORK = 200_000;
