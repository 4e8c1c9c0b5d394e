import { addCount, sortedCounts, type Counts } from '@vision/shared';
import { makeEvent, type AnalyticsEvent, type EventContext } from './events';
import { anchorX, anchorY, type Box, type LineRule } from '@vision/shared';

/**
 * Crossings of a line segment, the rule of supervision's `LineZone` (0.31.2, `minimum_crossing_threshold=1`)
 * with one triggering anchor, extended by a media-time hysteresis:
 * - the band: an anchor counts only when its projection on start->end lies within the segment, the strip
 *   between the perpendiculars at start and at end, borders included. The test is supervision's own
 *   arithmetic (cross products with unit perpendiculars at both ends), so it agrees to the last bit.
 * - the side: c = (ex - sx)(ay - sy) - (ey - sy)(ax - sx). c < 0 is the "in" side: the LEFT of start->end
 *   as seen on the image (y down), e.g. above a line drawn left to right. c >= 0 (on the line included) is
 *   the "out" side.
 * - a track's first in-band observation sets its side. An in-band observation on the other side starts a
 *   run; once the run has lasted >= hysteresis_ms of media time (0: at once) the crossing counts ("in" when
 *   the new side is the left one) and the side changes. An in-band observation on the old side ends the run;
 *   out-of-band observations and missing frames neither extend nor end it.
 * - memory: a track missing from two consecutive frames forgets its side (a frame where it is seen, even out
 *   of the band, keeps it).
 */
export interface LineTrackState {
  /** true: the left ("in") side. */
  side: boolean;
  pending_since: number | null;
  absent: number;
}

export interface LineCrossingsState {
  tracks: [string, LineTrackState][];
  in: Counts;
  out: Counts;
}

export function emptyLineCrossings(): LineCrossingsState {
  return { tracks: [], in: {}, out: {} };
}

/** Frames a track may be missing before its side is forgotten (supervision: threshold + 1). */
const FORGET_AFTER_FRAMES = 2;

export class LineCrossings {
  private readonly tracks: Map<string, LineTrackState>;
  private readonly inCounts: Counts;
  private readonly outCounts: Counts;
  private readonly sx: number;
  private readonly sy: number;
  private readonly ex: number;
  private readonly ey: number;
  private readonly dx: number;
  private readonly dy: number;
  private readonly l0: [number, number];
  private readonly l1: [number, number];

  constructor(
    private readonly rule: LineRule,
    state: LineCrossingsState,
  ) {
    this.tracks = new Map(state.tracks.map(([id, s]) => [id, { ...s }]));
    this.inCounts = sortedCounts(state.in);
    this.outCounts = sortedCounts(state.out);
    [this.sx, this.sy] = rule.start;
    [this.ex, this.ey] = rule.end;
    this.dx = this.ex - this.sx;
    this.dy = this.ey - this.sy;
    const mag = Math.sqrt(this.dx * this.dx + this.dy * this.dy);
    const ux = this.dx / mag;
    const uy = this.dy / mag;
    // supervision: limit vectors start->start+perp and end->end-perp, perp = (-uy, ux), taken as end - start.
    this.l0 = [this.sx + -uy - this.sx, this.sy + ux - this.sy];
    this.l1 = [this.ex - -uy - this.ex, this.ey - ux - this.ey];
  }

  /** One frame: `observations` are the watched tracked objects, `present` their track ids. */
  step(
    ctx: EventContext,
    observations: readonly { track: string; label: string; box: Box }[],
    present: ReadonlySet<string>,
  ): AnalyticsEvent[] {
    // Deleting the entry being visited is safe in a Map iteration.
    for (const [id, s] of this.tracks) {
      if (present.has(id)) s.absent = 0;
      else if (++s.absent >= FORGET_AFTER_FRAMES) this.tracks.delete(id);
    }
    const events: AnalyticsEvent[] = [];
    const t = ctx.mediaMs;
    for (const o of observations) {
      const ax = anchorX(o.box, this.rule.anchor);
      const ay = anchorY(o.box, this.rule.anchor);
      const c1 = this.l0[0] * (ay - this.sy) - this.l0[1] * (ax - this.sx);
      const c2 = this.l1[0] * (ay - this.ey) - this.l1[1] * (ax - this.ex);
      if (c1 > 0 !== c2 > 0) continue; // outside the segment's band
      const left = this.dx * (ay - this.sy) - this.dy * (ax - this.sx) < 0;
      const s = this.tracks.get(o.track);
      if (!s) {
        this.tracks.set(o.track, { side: left, pending_since: null, absent: 0 });
        continue;
      }
      if (left === s.side) {
        s.pending_since = null;
        continue;
      }
      if (s.pending_since === null) s.pending_since = t;
      if (t - s.pending_since < this.rule.hysteresis_ms) continue;
      s.side = left;
      s.pending_since = null;
      const direction = left ? 'in' : 'out';
      addCount(left ? this.inCounts : this.outCounts, o.label);
      events.push(
        makeEvent(ctx, `${o.track}#${direction}`, {
          kind: 'line.crossed',
          track_id: o.track,
          label: o.label,
          direction,
        }),
      );
    }
    return events;
  }

  counts(): { in: Counts; out: Counts } {
    return { in: sortedCounts(this.inCounts), out: sortedCounts(this.outCounts) };
  }

  snapshot(): LineCrossingsState {
    const tracks = [...this.tracks.entries()]
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([id, s]): [string, LineTrackState] => [id, { ...s }]);
    return { tracks, ...this.counts() };
  }
}
