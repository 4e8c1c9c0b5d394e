import { addCount, sortedCounts, type Counts } from '@vision/shared';
import { addDwell, dwellDue, emptyDwellStats, type DwellStats, type Visit } from './dwell-stats';
import { makeEvent, type AnalyticsEvent, type EndReason, type EventContext } from './events';
import { markZone, RecentStates, type FrameView, type ZoneMarks } from './frame-input';
import { cmp, switchPairs, type Fresh } from './id-switch';
import type { TrackState } from './zone-track';
import {
  perFrameSize,
  pointInPolygonXY,
  pointsInPixels,
  polygonXY,
  type FrameSize,
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
 * - id switch: a new track id whose anchor is inside may take over the open visit of a missing track of the same
 *   label whose last anchor was within switch_distance (no event; id-switch.ts).
 */
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

/** Bound once: a call through the package's re-exports reads a getter each time, and this runs per object. */
const inPolygon = pointInPolygonXY;

export class ZoneVisits {
  readonly tracks: Map<string, TrackState>;
  private readonly entered: Counts;
  private readonly exited: Counts;
  private readonly dwell: DwellStats;
  private readonly polygonAt = perFrameSize((size) => polygonXY(pointsInPixels(this.rule.polygon, size)));
  /** A lower bound of every track's last_seen_ms (tracks are seen at non-decreasing media times). */
  private oldestSeen = -Infinity;
  /** The frame's fresh observations (reused from frame to frame). */
  private readonly fresh: Fresh[] = [];
  /** occupancy() as of the last change of the open visits or their order; null: to be counted again. */
  private openCounts: Counts | null = null;
  private readonly recent: RecentStates<TrackState>;

  constructor(
    private readonly rule: ZoneRule,
    state: ZoneVisitsState,
  ) {
    this.tracks = new Map(state.tracks.map(([id, s]) => [id, structuredClone(s)]));
    this.entered = sortedCounts(state.entered);
    this.exited = sortedCounts(state.exited);
    this.dwell = structuredClone(state.dwell);
    this.recent = new RecentStates(this.tracks);
  }

  /**
   * Runs one frame's watched tracked objects; pushes the events, in a fixed order, onto `events` and marks in
   * the zone each object with an open visit.
   */
  step(
    ctx: EventContext,
    view: FrameView,
    size: FrameSize,
    events: AnalyticsEvent[],
    marks: ZoneMarks,
  ): void {
    const t = ctx.mediaMs;
    const poly = this.polygonAt(size);
    const { tracked, ax: anchorsX, ay: anchorsY } = view;
    const { width, height } = size;
    const fresh = this.fresh;
    fresh.length = 0;
    for (let i = 0; i < tracked.length; i++) {
      const obs = tracked[i];
      const inside = inPolygon(anchorsX[i], anchorsY[i], poly);
      // The track's anchor is kept normalized.
      const ax = anchorsX[i] / width;
      const ay = anchorsY[i] / height;
      const s = this.recent.get(i, obs.track);
      if (!s) {
        fresh.push({ at: i, obs, anchor: [ax, ay], inside });
        continue;
      }
      this.observe(ctx, events, obs.track, s, obs.label, ax, ay, inside);
      // Final for this frame: later steps move or end only the states of tracks not seen in it.
      if (s.visit) markZone(marks, obs.index, this.rule.id);
    }
    if (fresh.length > 0) this.placeFresh(ctx, events, fresh, view, size, marks);
    this.recent.endFrame(tracked.length);
    // Every track was last seen at or after oldestSeen: none can be lost before t - oldestSeen > lost_grace_ms.
    if (t - this.oldestSeen > this.rule.lost_grace_ms) this.dropLost(ctx, events, view.ids);
  }

  /** New track ids of a frame: take over missing tracks' visits (id switch, id-switch.ts), or start as new tracks. */
  private placeFresh(
    ctx: EventContext,
    events: AnalyticsEvent[],
    fresh: Fresh[],
    view: FrameView,
    size: FrameSize,
    marks: ZoneMarks,
  ): void {
    const t = ctx.mediaMs;
    for (const { f, old } of switchPairs(this.rule, this.tracks, fresh, view, t, size)) {
      const s = this.tracks.get(old) as TrackState;
      this.tracks.delete(old);
      this.tracks.set(f.obs.track, s);
      this.openCounts = null;
      this.observe(ctx, events, f.obs.track, s, f.obs.label, f.anchor[0], f.anchor[1], true);
    }
    // In frame order; each one's state is final once placed (a visit taken over, or a new track).
    for (const f of fresh) {
      let s = this.tracks.get(f.obs.track);
      if (!s) {
        s = {
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
      this.recent.keep(f.at, f.obs.track, s);
      if (s.visit) markZone(marks, f.obs.index, this.rule.id);
    }
  }

  /** Ends the visits of tracks not seen for more than lost_grace_ms (by track id). */
  private dropLost(ctx: EventContext, events: AnalyticsEvent[], seen: ReadonlySet<string>): void {
    const t = ctx.mediaMs;
    const lost: string[] = [];
    let oldest = t;
    for (const [id, s] of this.tracks)
      if (t - s.last_seen_ms > this.rule.lost_grace_ms && !seen.has(id)) lost.push(id);
      else if (s.last_seen_ms < oldest) oldest = s.last_seen_ms;
    this.oldestSeen = oldest;
    lost.sort();
    for (const id of lost) {
      const s = this.tracks.get(id) as TrackState;
      this.tracks.delete(id);
      if (s.visit) events.push(this.endVisit(ctx, id, s.visit, 'lost'));
    }
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
    if (inside !== s.inside) {
      this.otherSide(ctx, events, track, s);
      return;
    }
    s.pending_since = null;
    if (s.visit) {
      s.visit.last_inside_ms = t;
      this.checkDwell(ctx, events, track, s.visit);
    }
  }

  /** An observation on the other side of `s.inside`: the run goes on, and may enter or end a visit. */
  private otherSide(ctx: EventContext, events: AnalyticsEvent[], track: string, s: TrackState): void {
    const t = ctx.mediaMs;
    const label = s.label;
    if (s.pending_since === null) s.pending_since = t;
    const since = s.pending_since;
    if (!s.inside && t - since >= this.rule.enter_ms) {
      s.inside = true;
      s.pending_since = null;
      this.openCounts = null;
      s.visit = {
        id: `${track}@${ctx.seq}`,
        label,
        start_ms: since,
        last_inside_ms: t,
        dwell_alerted: false,
      };
      addCount(this.entered, label);
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
    this.openCounts = null;
    addCount(this.exited, visit.label);
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

  /** Ends every open visit (rule changed or removed); returns their zone.exited events, by track id. */
  endAll(ctx: EventContext, reason: EndReason): AnalyticsEvent[] {
    const events: AnalyticsEvent[] = [];
    for (const id of [...this.tracks.keys()].sort()) {
      const s = this.tracks.get(id) as TrackState;
      if (s.visit) events.push(this.endVisit(ctx, id, s.visit, reason));
    }
    this.tracks.clear();
    this.recent.clear();
    return events;
  }

  /** Open visits by label, and all labels together under `*` (the same object until they change: read only). */
  occupancy(): Record<string, number> {
    if (this.openCounts) return this.openCounts;
    const out: Counts = {};
    let total = 0;
    for (const s of this.tracks.values())
      if (s.visit) {
        addCount(out, s.visit.label);
        total++;
      }
    addCount(out, '*', total);
    this.openCounts = out;
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
