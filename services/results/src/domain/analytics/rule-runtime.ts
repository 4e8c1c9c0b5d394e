import { addCount, type Counts } from '@vision/shared';
import { CoverageZone, emptyCoverageZone, type CoverageZoneState } from './coverage-zone';
import { PolygonCover, perFrameSize, pointsInPixels } from '@vision/shared';
import { dwellPercentile } from './dwell-stats';
import type { AnalyticsEvent, EndReason, EventContext } from './events';
import { type Box, type FrameSize, type LineRule, type ZoneRule } from '@vision/shared';
import { emptyLineCrossings, LineCrossings, type LineCrossingsState } from './line-crossings';
import { OccupancyAlerts, type OccupancyAlertsState } from './occupancy-alerts';
import { emptyZoneVisits, ZoneVisits, type ZoneVisitsState } from './zone-visits';
import { markZone, type FrameView, type ZoneMarks } from './frame-input';

export interface ZoneRuntimeState {
  visits?: ZoneVisitsState;
  coverage?: CoverageZoneState;
  occupancy: OccupancyAlertsState;
}

export interface ZoneSummary {
  kind: 'zone';
  id: string;
  name: string;
  version: number;
  mode: 'anchor' | 'coverage';
  /** Open visits by label, `*` for all (coverage zones: watched objects overlapping the zone at the last frame). */
  occupancy: Counts;
  entered: Counts;
  exited: Counts;
  visits: { total: number; open: number };
  dwell_ms: { count: number; p50: number | null; p95: number | null; max: number | null };
  occupancy_alerts: Record<string, boolean>;
  coverage?: { fraction: number; active: boolean };
}

export interface LineSummary {
  kind: 'line';
  id: string;
  name: string;
  version: number;
  in: Counts;
  out: Counts;
  in_total: number;
  out_total: number;
}

/** Bound once: a call through the package's re-exports reads a getter each time, and this runs per object. */
const countIn = addCount;

const total = (c: Counts): number => Object.values(c).reduce((a, b) => a + b, 0);

export class ZoneRuntime {
  readonly kind = 'zone';
  private readonly visits?: ZoneVisits;
  private readonly coverage?: CoverageZone;
  /** A coverage zone's polygon in the pixels of a frame of that size. */
  private readonly coverAt = perFrameSize(
    (size) => new PolygonCover(pointsInPixels(this.rule.polygon, size)),
  );
  private readonly alerts: OccupancyAlerts;
  private counts: Counts = {};

  constructor(
    public rule: ZoneRule,
    readonly version: number,
    state?: ZoneRuntimeState,
  ) {
    const threshold = rule.coverage;
    if (threshold === undefined) {
      this.visits = new ZoneVisits(rule, state?.visits ?? emptyZoneVisits());
    } else {
      this.coverage = new CoverageZone(
        { ...rule, coverage: threshold },
        state?.coverage ?? emptyCoverageZone(),
      );
    }
    this.alerts = new OccupancyAlerts(rule.occupancy ?? [], state?.occupancy ?? []);
    this.counts = this.occupancy();
  }

  private occupancy(): Counts {
    if (this.visits) return this.visits.occupancy();
    return this.coverage?.state.counts ?? {};
  }

  /**
   * Runs one frame of size `size`: pushes its events onto `events` and marks in the zone each object counted
   * in it.
   */
  step(
    ctx: EventContext,
    view: FrameView,
    size: FrameSize,
    events: AnalyticsEvent[],
    marks: ZoneMarks,
  ): void {
    if (this.visits) {
      this.visits.step(ctx, view, size, events, marks);
    } else {
      const watched = view.watched;
      const cover = this.coverAt(size);
      const counts: Counts = {};
      let all = 0;
      const boxes: Box[] = new Array<Box>(watched.length);
      for (let i = 0; i < watched.length; i++) {
        const w = watched[i];
        boxes[i] = w.px;
        if (cover.overlaps(w.px)) {
          countIn(counts, w.label);
          all++;
          markZone(marks, w.index, this.rule.id);
        }
      }
      addCount(counts, '*', all);
      (this.coverage as CoverageZone).step(ctx, cover, boxes, counts, events);
    }
    this.counts = this.occupancy();
    if (this.rule.occupancy) this.alerts.step(ctx, this.counts, events);
  }

  frameCounts(): { counts: Counts; coverage?: number } {
    return this.coverage
      ? { counts: this.counts, coverage: this.coverage.fraction }
      : { counts: this.counts };
  }

  end(ctx: EventContext, reason: EndReason): AnalyticsEvent[] {
    const ended = this.visits
      ? this.visits.endAll(ctx, reason)
      : (this.coverage as CoverageZone).endAll(ctx, reason);
    return [...ended, ...this.alerts.endAll(ctx, reason, this.counts)];
  }

  summary(): ZoneSummary {
    const stats = this.visits
      ? this.visits.stats()
      : (() => {
          const s = (this.coverage as CoverageZone).state;
          return { entered: { '*': s.entered }, exited: { '*': s.exited }, dwell: s.dwell };
        })();
    const entered = total(stats.entered);
    const out: ZoneSummary = {
      kind: 'zone',
      id: this.rule.id,
      name: this.rule.name ?? this.rule.id,
      version: this.version,
      mode: this.coverage ? 'coverage' : 'anchor',
      occupancy: this.counts,
      entered: stats.entered,
      exited: stats.exited,
      visits: { total: entered, open: entered - total(stats.exited) },
      dwell_ms: {
        count: stats.dwell.count,
        p50: dwellPercentile(stats.dwell, 50),
        p95: dwellPercentile(stats.dwell, 95),
        max: stats.dwell.count > 0 ? stats.dwell.max : null,
      },
      occupancy_alerts: this.alerts.exceeded(),
    };
    if (this.coverage)
      out.coverage = { fraction: this.coverage.fraction, active: this.coverage.state.active };
    return out;
  }

  snapshot(): ZoneRuntimeState {
    const occupancy = this.alerts.snapshot();
    return this.visits
      ? { visits: this.visits.snapshot(), occupancy }
      : { coverage: this.coverage?.snapshot(), occupancy };
  }
}

export class LineRuntime {
  readonly kind = 'line';
  private readonly crossings: LineCrossings;

  constructor(
    public rule: LineRule,
    readonly version: number,
    state?: LineCrossingsState,
  ) {
    this.crossings = new LineCrossings(rule, state ?? emptyLineCrossings());
  }

  step(ctx: EventContext, view: FrameView, size: FrameSize, events: AnalyticsEvent[]): void {
    this.crossings.step(ctx, view, size, events);
  }

  /** A line holds no open state worth an event: a changed or removed line just stops counting. */
  end(): AnalyticsEvent[] {
    return [];
  }

  summary(): LineSummary {
    const c = this.crossings.counts();
    return {
      kind: 'line',
      id: this.rule.id,
      name: this.rule.name ?? this.rule.id,
      version: this.version,
      in: c.in,
      out: c.out,
      in_total: total(c.in),
      out_total: total(c.out),
    };
  }

  snapshot(): LineCrossingsState {
    return this.crossings.snapshot();
  }
}
