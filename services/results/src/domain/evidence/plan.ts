/**
 * Which pictures a step of a task's evaluation takes (docs/EVIDENCE.md): one per event, of the frame
 * it was decided on, with its track's box drawn (its zone's polygon when the track is not in that frame, or the
 * event has none); and, per track, its best shot when a frame of the step beats the kept one. Pure.
 */
import type { PictureDrawing, RuleSet } from '@vision/shared';
import type { AnalyticsEvent } from '../analytics';
import type { StoredFrame, StoredObject } from '../frames';

export type Box = [number, number, number, number];

/** The best-shot size rule and how much better a frame must score to replace the kept one. */
export const BEST_SHOT = {
  /** The box covers at least this share of the frame's area. */
  minArea: 0.01,
  /** The box keeps this share of the frame's width (height) away from its left and right (top, bottom) edges. */
  edgeMargin: 0.005,
  /** A frame replaces the kept one when its score is higher by at least this much. */
  minGain: 0.05,
} as const;

const clamp01 = (v: number) => Math.min(1, Math.max(0, v));

/** A stored object's box as [x1, y1, x2, y2], normalized and inside the frame. */
export function boxOf(o: StoredObject): Box {
  const [cx, cy, w, h] = o.b;
  return [clamp01(cx - w / 2), clamp01(cy - h / 2), clamp01(cx + w / 2), clamp01(cy + h / 2)];
}

/** Whether a box may be a best shot: large enough, and not cut by the frame's edges. */
export function passesSizeRule(b: Box): boolean {
  const m = BEST_SHOT.edgeMargin;
  const area = (b[2] - b[0]) * (b[3] - b[1]);
  // 1e-9: the rounding of a difference of normalized coordinates does not decide (0.5 - 0.4 < 0.1).
  const e = 1e-9;
  return (
    area >= BEST_SHOT.minArea - e && b[0] >= m - e && b[1] >= m - e && b[2] <= 1 - m + e && b[3] <= 1 - m + e
  );
}

/** The first object of `trackId` in a frame (the engine uses a track's first object too). */
function trackObject(frame: StoredFrame | undefined, trackId: string | undefined): StoredObject | undefined {
  if (!frame || trackId === undefined) return undefined;
  return frame.objects.find((o) => o.t === trackId);
}

/** What an event's picture shows: its track's box in its frame, else its zone's polygon, else the whole frame. */
export function eventDrawing(
  e: AnalyticsEvent,
  frame: StoredFrame | undefined,
  rules: RuleSet,
): PictureDrawing {
  const o = trackObject(frame, e.track_id);
  if (o) return { box: boxOf(o) };
  const zone = rules.zones?.find((z) => z.id === e.rule_id);
  if (zone) return { polygon: zone.polygon.map(([x, y]) => [x, y] as [number, number]) };
  return { box: [0, 0, 1, 1] };
}

/** A picture to take: of an event (id: the event id) or of a track's best shot (id: the track id). */
export interface CaptureItem {
  what: 'event' | 'track';
  id: string;
  seq: number;
  drawing: PictureDrawing;
  /** A best shot's detection score. */
  score?: number;
}

/**
 * Per track of `frames`, the frame whose box passes the size rule with the highest score (the earliest of equal
 * ones), when it beats the track's kept score (`kept`) by BEST_SHOT.minGain or the track has none: at most one
 * picture per track per step.
 */
export function bestShotPicks(
  frames: readonly StoredFrame[],
  kept: ReadonlyMap<string, number>,
): CaptureItem[] {
  const best = new Map<string, { seq: number; score: number; box: Box }>();
  for (const f of frames) {
    const seen = new Set<string>();
    for (const o of f.objects) {
      if (o.t === undefined || seen.has(o.t)) continue;
      seen.add(o.t);
      const box = boxOf(o);
      if (!passesSizeRule(box)) continue;
      const prev = best.get(o.t);
      if (!prev || o.s > prev.score) best.set(o.t, { seq: f.seq, score: o.s, box });
    }
  }
  const out: CaptureItem[] = [];
  for (const [id, b] of best) {
    const k = kept.get(id);
    if (k !== undefined && b.score < k + BEST_SHOT.minGain) continue;
    out.push({ what: 'track', id, seq: b.seq, drawing: { box: b.box }, score: b.score });
  }
  return out.sort((a, b) => a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The pictures of a step's events, one per event id, drawn on the frames the step holds (`bySeq`). */
export function eventPicks(
  events: readonly AnalyticsEvent[],
  bySeq: ReadonlyMap<number, StoredFrame>,
  rules: RuleSet,
): CaptureItem[] {
  const seen = new Set<string>();
  const out: CaptureItem[] = [];
  for (const e of events) {
    if (seen.has(e.id)) continue;
    seen.add(e.id);
    out.push({ what: 'event', id: e.id, seq: e.seq, drawing: eventDrawing(e, bySeq.get(e.seq), rules) });
  }
  return out;
}

/** Where a task's pictures are kept in the object store: everything under evidencePrefix(task). */
export function evidencePrefix(taskId: string): string {
  return `evidence/${taskId}/`;
}

/** The objects of an event's picture (the frame with its drawing, and the crop), or of a track's best shot. */
export function evidenceKeys(
  taskId: string,
  item: Pick<CaptureItem, 'what' | 'id' | 'seq'>,
): { full: string; crop: string } {
  // A track id may be `..` or hold dots: hex keeps every key a plain path segment.
  const base =
    item.what === 'event'
      ? `${evidencePrefix(taskId)}events/${item.id}`
      : `${evidencePrefix(taskId)}tracks/${Buffer.from(item.id).toString('hex')}/${item.seq}`;
  return { full: `${base}.jpg`, crop: `${base}.crop.jpg` };
}
