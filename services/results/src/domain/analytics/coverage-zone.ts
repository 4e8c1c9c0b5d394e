import type { Counts } from '@vision/shared';
import { reachesCoverage, type PolygonCover } from '@vision/shared';
import { addDwell, dwellDue, emptyDwellStats, type DwellStats, type Visit } from './dwell-stats';
import { makeEvent, type AnalyticsEvent, type EndReason, type EventContext } from './events';
import { type Box, type ZoneRule } from '@vision/shared';

/**
 * A zone with a coverage trigger (fire, smoke: where a point means nothing). At each frame the covered fraction
 * is area((union of the watched boxes) ∩ polygon) / area(polygon) (coverage.ts: exact up to rounding), boxes and
 * polygon in the frame's pixels. The zone
 * becomes active once the fraction has reached `coverage` (reachesCoverage: >= coverage - 1e-9) in every frame for >= enter_ms of media time, and
 * inactive once it has been below in every frame for >= exit_ms. An active period is one visit (id
 * `coverage@<seq>`), with zone.entered, zone.exited (dwell_ms) and zone.dwell_exceeded like a tracked visit; its
 * dwell runs from the first frame of the run that activated it to the last frame at or above the threshold.
 * Track ids play no part.
 */
export interface CoverageZoneState {
  active: boolean;
  pending_since: number | null;
  visit: Visit | null;
  fraction: number;
  /** Watched objects overlapping the zone at the last frame, by label and `*`. */
  counts: Counts;
  entered: number;
  exited: number;
  dwell: DwellStats;
}

export function emptyCoverageZone(): CoverageZoneState {
  return {
    active: false,
    pending_since: null,
    visit: null,
    fraction: 0,
    counts: {},
    entered: 0,
    exited: 0,
    dwell: emptyDwellStats(),
  };
}

const VISIT_LABEL = '*';

export class CoverageZone {
  private readonly s: CoverageZoneState;

  constructor(
    private readonly rule: ZoneRule & { coverage: number },
    state: CoverageZoneState,
  ) {
    this.s = structuredClone(state);
  }

  get fraction(): number {
    return this.s.fraction;
  }

  get state(): Readonly<CoverageZoneState> {
    return this.s;
  }

  /** One frame: `cover` the polygon and `boxes` the watched boxes in the frame's pixels; pushes its events. */
  step(
    ctx: EventContext,
    cover: PolygonCover,
    boxes: readonly Box[],
    counts: Counts,
    events: AnalyticsEvent[],
  ): void {
    const s = this.s;
    s.counts = counts;
    const t = ctx.mediaMs;
    s.fraction = Math.min(1, cover.coveredArea(boxes) / cover.area);
    const on = reachesCoverage(s.fraction, this.rule.coverage);
    if (on === s.active) {
      s.pending_since = null;
      if (s.visit) {
        s.visit.last_inside_ms = t;
        this.checkDwell(ctx, events, s.visit);
      }
      return;
    }
    if (s.pending_since === null) s.pending_since = t;
    const since = s.pending_since;
    if (!s.active && t - since >= this.rule.enter_ms) {
      const visit: Visit = {
        id: `coverage@${ctx.seq}`,
        label: VISIT_LABEL,
        start_ms: since,
        last_inside_ms: t,
        dwell_alerted: false,
      };
      Object.assign(s, { active: true, pending_since: null, visit, entered: s.entered + 1 });
      events.push(
        makeEvent(ctx, visit.id, { kind: 'zone.entered', visit_id: visit.id, coverage: s.fraction }),
      );
      this.checkDwell(ctx, events, visit);
    } else if (s.active && s.visit && t - since >= this.rule.exit_ms) {
      events.push(this.end(ctx, s.visit, 'exited'));
    }
  }

  private checkDwell(ctx: EventContext, events: AnalyticsEvent[], visit: Visit): void {
    const dwell = dwellDue(this.rule, visit);
    if (dwell === undefined) return;
    events.push(
      makeEvent(ctx, visit.id, {
        kind: 'zone.dwell_exceeded',
        visit_id: visit.id,
        dwell_ms: dwell,
        coverage: this.s.fraction,
      }),
    );
  }

  /** Ends the active period (frames, or a rule change); returns its zone.exited. */
  private end(ctx: EventContext, visit: Visit, reason: EndReason): AnalyticsEvent {
    const s = this.s;
    const dwell = visit.last_inside_ms - visit.start_ms;
    addDwell(s.dwell, dwell);
    Object.assign(s, { active: false, pending_since: null, visit: null, exited: s.exited + 1 });
    return makeEvent(ctx, visit.id, {
      kind: 'zone.exited',
      visit_id: visit.id,
      dwell_ms: dwell,
      coverage: s.fraction,
      reason,
    });
  }

  endAll(ctx: EventContext, reason: EndReason): AnalyticsEvent[] {
    return this.s.visit ? [this.end(ctx, this.s.visit, reason)] : [];
  }

  snapshot(): CoverageZoneState {
    return structuredClone(this.s);
  }
}
