import { addCount, sortedCounts, type Counts } from '@vision/shared';
import { makeEvent, type AnalyticsEvent, type EventContext } from './events';
import { perFrameSize, type FrameSize, type LineRule } from '@vision/shared';
import { RecentStates, type FrameView } from './frame-input';

/**
 * Crossings of a line segment, the rule of supervision's `LineZone` (0.31.2, `minimum_crossing_threshold=1`)
 * with one triggering anchor, extended by a media-time hysteresis. Everything is decided in the frame's
 * pixels: the segment is (start, end) scaled by the frame's width and height, and the anchor is taken on the
 * box in pixels, as supervision is fed them.
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

/**
 * The segment start -> end in the pixels of a frame (d: end - start) and its band's limit vectors l0, l1, as
 * supervision computes them: start -> start + perp and end -> end - perp, perp = (-uy, ux), each taken as
 * its end minus its start.
 */
function lineBand(rule: LineRule, size: FrameSize) {
  const sx = rule.start[0] * size.width;
  const sy = rule.start[1] * size.height;
  const ex = rule.end[0] * size.width;
  const ey = rule.end[1] * size.height;
  const dx = ex - sx;
  const dy = ey - sy;
  const mag = Math.sqrt(dx * dx + dy * dy);
  const ux = dx / mag;
  const uy = dy / mag;
  return {
    sx,
    sy,
    ex,
    ey,
    dx,
    dy,
    l0x: sx + -uy - sx,
    l0y: sy + ux - sy,
    l1x: ex - -uy - ex,
    l1y: ey - ux - ey,
  };
}

/** Frames a track may be missing before its side is forgotten (supervision: threshold + 1). */
const FORGET_AFTER_FRAMES = 2;

export class LineCrossings {
  private readonly tracks: Map<string, LineTrackState>;
  private readonly inCounts: Counts;
  private readonly outCounts: Counts;
  /** The segment and its band in the pixels of a frame of that size. */
  private readonly bandAt = perFrameSize((size) => lineBand(this.rule, size));
  private readonly recent: RecentStates<LineTrackState>;

  constructor(
    private readonly rule: LineRule,
    state: LineCrossingsState,
  ) {
    this.tracks = new Map(state.tracks.map(([id, s]) => [id, { ...s }]));
    this.inCounts = sortedCounts(state.in);
    this.outCounts = sortedCounts(state.out);
    this.recent = new RecentStates(this.tracks);
  }

  /**
   * One frame of size `size`: what the line watches of it (its tracked objects and their anchors in pixels);
   * pushes its crossings onto `events`.
   */
  step(ctx: EventContext, view: FrameView, size: FrameSize, events: AnalyticsEvent[]): void {
    const { tracked, ax: anchorsX, ay: anchorsY } = view;
    const { sx, sy, ex, ey, dx, dy, l0x, l0y, l1x, l1y } = this.bandAt(size);
    const t = ctx.mediaMs;
    // The tracks seen in this frame, then the others: their steps touch disjoint entries, so the order is free.
    let seen = 0;
    for (let i = 0; i < tracked.length; i++) {
      const o = tracked[i];
      const s = this.recent.get(i, o.track);
      if (s) {
        s.absent = 0;
        seen++;
      }
      const ax = anchorsX[i];
      const ay = anchorsY[i];
      const c1 = l0x * (ay - sy) - l0y * (ax - sx);
      const c2 = l1x * (ay - ey) - l1y * (ax - ex);
      if (c1 > 0 !== c2 > 0) continue; // outside the segment's band
      const left = dx * (ay - sy) - dy * (ax - sx) < 0;
      if (!s) {
        const created: LineTrackState = { side: left, pending_since: null, absent: 0 };
        this.tracks.set(o.track, created);
        this.recent.keep(i, o.track, created);
        seen++;
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
    this.recent.endFrame(tracked.length);
    // Deleting the entry being visited is safe in a Map iteration.
    if (seen < this.tracks.size) {
      const present = view.ids;
      for (const [id, s] of this.tracks)
        if (!present.has(id) && ++s.absent >= FORGET_AFTER_FRAMES) this.tracks.delete(id);
    }
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
