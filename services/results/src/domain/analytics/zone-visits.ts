import { addCount, sortedCounts, type Counts } from '@vision/shared';
import { addDwell, dwellDue, emptyDwellStats, type DwellStats, type Visit } from './dwell-stats';
import { makeEvent, type AnalyticsEvent, type EndReason, type EventContext } from './events';
import type { FrameView, TrackedObservation } from './frame-input';
import {
  imageDistance,
  perFrameSize,
  pointInPolygonXY,
  pointsInPixels,
  polygonXY,
  type FrameSize,
  type Point,
  type ZoneRule,
} from '@vision/shared';

/**
 * Visits of tracked objects to a zone, decided by the anchor point (docs/ANALYTICS.md, "Exact rules"), on the
 * frame's pixels: the anchor of the box in pixels in the polygon in pixels.
 * - hysteresis: a track enters once its anchor has been seen inside for >= enter_ms of media time without
 *   being seen outside in between; an open visit ends once the anchor has been seen outside for >= exit_ms
 *   without being seen inside in between. Frames without the track neither extend nor reset a run.
 * - a visit's dwell is (last media time the anchor was seen inside) - (first media time of the run that
 *   entered).
 * - a track not seen for more than lost_grace_ms is lost: its open visit ends (zone.exited, reason lost).
 * - id switch: a track id with no state in this zone whose anchor is inside, in a frame where an open visit's
 *   track is missing (last seen <= lost_grace_ms ago) with the same label and its last anchor within
 *   switch_distance on the image (imageDistance: units of the frame's longer side), takes that visit over
 *   (no event). Pairs are matched nearest first.
 */
export interface TrackState {
  label: string;
  inside: boolean;
  /** Media time of the first observation of the current run on the other side of `inside`. */
  pending_since: number | null;
  last_seen_ms: number;
  /** Normalized: the switch distance is measured on the frame that compares. */
  last_anchor: [number, number];
  visit: Visit | null;
}

export interface ZoneVisitsState {
  /** Tracks by id, sorted by id in a snapshot. */
  tracks: [string, TrackState][];
  entered: Counts;
  exited: Counts;
  dwell: DwellStats;
}

export function emptyZoneVisits(): ZoneVisitsState {
  return { tracks: [], entered: {}, exited: {}, dwell: emptyDwellStats() };
}

const bump = (counts: Counts, label: string): void => addCount(counts, label);

export class ZoneVisits {
  readonly tracks: Map<string, TrackState>;
  private readonly entered: Counts;
  private readonly exited: Counts;
  private readonly dwell: DwellStats;
  private readonly polygonAt = perFrameSize((size) => polygonXY(pointsInPixels(this.rule.polygon, size)));

  constructor(
    private readonly rule: ZoneRule,
    state: ZoneVisitsState,
  ) {
    this.tracks = new Map(state.tracks.map(([id, s]) => [id, structuredClone(s)]));
    this.entered = sortedCounts(state.entered);
    this.exited = sortedCounts(state.exited);
    this.dwell = structuredClone(state.dwell);
  }

  /**
   * Runs one frame's watched tracked objects; returns the events, in a fixed order, and marks `inZone(index)` for
   * each object with an open visit.
   */
  step(
    ctx: EventContext,
    view: FrameView,
    size: FrameSize,
    inZone: (index: number) => void,
  ): AnalyticsEvent[] {
    const events: AnalyticsEvent[] = [];
    const t = ctx.mediaMs;
    const poly = this.polygonAt(size);
    const { tracked, ids: seen, ax: anchorsX, ay: anchorsY } = view;
    const { width, height } = size;
    const fresh: { obs: TrackedObservation; anchor: Point; inside: boolean }[] = [];
    /** Each observation's state once observed (a new track's: after the frame's new tracks are placed). */
    const states: (TrackState | undefined)[] = new Array<TrackState | undefined>(tracked.length);
    for (let i = 0; i < tracked.length; i++) {
      const obs = tracked[i];
      const inside = pointInPolygonXY(anchorsX[i], anchorsY[i], poly);
      // The track's anchor is kept normalized.
      const ax = anchorsX[i] / width;
      const ay = anchorsY[i] / height;
      const s = (states[i] = this.tracks.get(obs.track));
      if (s) this.observe(ctx, events, obs.track, s, obs.label, ax, ay, inside);
      else fresh.push({ obs, anchor: [ax, ay], inside });
    }
    this.takeOver(ctx, events, fresh, seen, size);
    for (const f of fresh) {
      if (this.tracks.has(f.obs.track)) continue;
      const s: TrackState = {
        label: f.obs.label,
        inside: false,
        pending_since: null,
        last_seen_ms: t,
        last_anchor: [f.anchor[0], f.anchor[1]],
        visit: null,
      };
      this.tracks.set(f.obs.track, s);
      this.observe(ctx, events, f.obs.track, s, f.obs.label, f.anchor[0], f.anchor[1], f.inside);
    }
    const lost: string[] = [];
    for (const [id, s] of this.tracks)
      if (t - s.last_seen_ms > this.rule.lost_grace_ms && !seen.has(id)) lost.push(id);
    lost.sort();
    for (const id of lost) {
      const s = this.tracks.get(id) as TrackState;
      this.tracks.delete(id);
      if (s.visit) events.push(this.endVisit(ctx, id, s.visit, 'lost'));
    }
    for (let i = 0; i < tracked.length; i++)
      if ((states[i] ?? this.tracks.get(tracked[i].track))?.visit) inZone(tracked[i].index);
    return events;
  }

  private observe(
    ctx: EventContext,
    events: AnalyticsEvent[],
    track: string,
    s: TrackState,
    label: string,
    ax: number,
    ay: number,
    inside: boolean,
  ): void {
    const t = ctx.mediaMs;
    s.label = label;
    s.last_seen_ms = t;
    s.last_anchor[0] = ax;
    s.last_anchor[1] = ay;
    if (inside === s.inside) {
      s.pending_since = null;
      if (s.visit) {
        s.visit.last_inside_ms = t;
        this.checkDwell(ctx, events, track, s.visit);
      }
      return;
    }
    if (s.pending_since === null) s.pending_since = t;
    const since = s.pending_since;
    if (!s.inside && t - since >= this.rule.enter_ms) {
      s.inside = true;
      s.pending_since = null;
      s.visit = {
        id: `${track}@${ctx.seq}`,
        label,
        start_ms: since,
        last_inside_ms: t,
        dwell_alerted: false,
      };
      bump(this.entered, label);
      events.push(
        makeEvent(ctx, s.visit.id, { kind: 'zone.entered', visit_id: s.visit.id, track_id: track, label }),
      );
      this.checkDwell(ctx, events, track, s.visit);
    } else if (s.inside && s.visit && t - since >= this.rule.exit_ms) {
      events.push(this.endVisit(ctx, track, s.visit, 'exited'));
      s.inside = false;
      s.pending_since = null;
      s.visit = null;
    }
  }

  private checkDwell(ctx: EventContext, events: AnalyticsEvent[], track: string, visit: Visit): void {
    const dwell = dwellDue(this.rule, visit);
    if (dwell === undefined) return;
    events.push(
      makeEvent(ctx, visit.id, {
        kind: 'zone.dwell_exceeded',
        visit_id: visit.id,
        track_id: track,
        label: visit.label,
        dwell_ms: dwell,
      }),
    );
  }

  /** Ends a visit: counts it, records its dwell, and returns its zone.exited event. */
  endVisit(ctx: EventContext, track: string, visit: Visit, reason: EndReason): AnalyticsEvent {
    const dwell = visit.last_inside_ms - visit.start_ms;
    bump(this.exited, visit.label);
    addDwell(this.dwell, dwell);
    return makeEvent(ctx, visit.id, {
      kind: 'zone.exited',
      visit_id: visit.id,
      track_id: track,
      label: visit.label,
      dwell_ms: dwell,
      reason,
    });
  }

  /** Id switch: new ids inside the zone take over open visits of missing tracks (nearest pairs first). */
  private takeOver(
    ctx: EventContext,
    events: AnalyticsEvent[],
    fresh: { obs: TrackedObservation; anchor: Point; inside: boolean }[],
    seen: ReadonlySet<string>,
    size: FrameSize,
  ): void {
    const t = ctx.mediaMs;
    if (!fresh.some((f) => f.inside)) return;
    const missing = [...this.tracks.entries()].filter(
      ([id, s]) => !seen.has(id) && s.visit !== null && t - s.last_seen_ms <= this.rule.lost_grace_ms,
    );
    if (missing.length === 0) return;
    const pairs: { d: number; last: number; fresh: string; old: string; f: (typeof fresh)[number] }[] = [];
    for (const f of fresh) {
      if (!f.inside) continue;
      for (const [id, s] of missing) {
        const d = imageDistance(f.anchor[0], f.anchor[1], s.last_anchor[0], s.last_anchor[1], size);
        if (s.visit?.label === f.obs.label && d <= this.rule.switch_distance)
          pairs.push({ d, last: s.last_seen_ms, fresh: f.obs.track, old: id, f });
      }
    }
    pairs.sort((a, b) => a.d - b.d || b.last - a.last || cmp(a.fresh, b.fresh) || cmp(a.old, b.old));
    const taken = new Set<string>();
    for (const p of pairs) {
      if (taken.has(p.old) || this.tracks.has(p.fresh)) continue;
      taken.add(p.old);
      const s = this.tracks.get(p.old) as TrackState;
      this.tracks.delete(p.old);
      this.tracks.set(p.fresh, s);
      this.observe(ctx, events, p.fresh, s, p.f.obs.label, p.f.anchor[0], p.f.anchor[1], true);
    }
  }

  /** Ends every open visit (rule changed or removed); returns their zone.exited events, by track id. */
  endAll(ctx: EventContext, reason: EndReason): AnalyticsEvent[] {
    const events: AnalyticsEvent[] = [];
    for (const id of [...this.tracks.keys()].sort()) {
      const s = this.tracks.get(id) as TrackState;
      if (s.visit) events.push(this.endVisit(ctx, id, s.visit, reason));
    }
    this.tracks.clear();
    return events;
  }

  /** Open visits by label, and all labels together under `*`. */
  occupancy(): Record<string, number> {
    const out: Counts = {};
    let total = 0;
    for (const s of this.tracks.values())
      if (s.visit) {
        addCount(out, s.visit.label);
        total++;
      }
    addCount(out, '*', total);
    return out;
  }

  /** Visits entered and ended by label, and the dwell statistics of ended visits (read only). */
  stats(): { entered: Counts; exited: Counts; dwell: DwellStats } {
    return { entered: sortedCounts(this.entered), exited: sortedCounts(this.exited), dwell: this.dwell };
  }

  snapshot(): ZoneVisitsState {
    const tracks = [...this.tracks.entries()].sort((a, b) => cmp(a[0], b[0]));
    return structuredClone({
      tracks,
      entered: sortedCounts(this.entered),
      exited: sortedCounts(this.exited),
      dwell: this.dwell,
    });
  }
}

export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
