/**
 * Which pictures a step of a task's evaluation takes (docs/EVIDENCE.md): one per event, of the frame
 * it was decided on, with its track's box drawn (its zone's polygon when the track is not in that frame, or the
 * event has none); and, per track, its best shot when a frame of the step beats the kept one. Pure.
 */
import type { PictureDrawing, RuleSet } from '@vision/shared';
import type { AnalyticsEvent } from '../analytics';
import type { StoredFrame, StoredObject } from '../frames';
import { bestShotCandidates, boxOf, type BestShotRule, type Shot } from './best-shot';

export { boxOf } from './best-shot';

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
  /** A best shot's detection score and the rule its box met. */
  score?: number;
  rule?: BestShotRule;
}

/**
 * Per track of `frames`, the picture of its best box when it replaces the kept one (`kept`: the tracks' stored
 * pictures; best-shot.ts): at most one picture per track per step, every track without a stored picture gets one.
 */
export function bestShotPicks(
  frames: readonly StoredFrame[],
  kept: ReadonlyMap<string, Shot>,
): CaptureItem[] {
  return bestShotCandidates(frames, kept).map((c) => ({
    what: 'track',
    id: c.trackId,
    seq: c.seq,
    drawing: { box: c.box },
    score: c.score,
    rule: c.rule,
  }));
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
