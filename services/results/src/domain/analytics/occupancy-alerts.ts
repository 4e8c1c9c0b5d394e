import { countOf, type Counts } from '@vision/shared';
import { makeEvent, type AnalyticsEvent, type EndReason, type EventContext } from './events';
import type { OccupancyThreshold } from '@vision/shared';

/**
 * Occupancy alerts of a zone, one per threshold label (`*`: every watched label together). The count is the
 * zone's occupancy for that label at each frame. An alert is raised (zone.occupancy_exceeded) once the count
 * has been > `over` in every frame for >= hysteresis_ms of media time, and cleared (zone.occupancy_cleared)
 * once it has been < `under` (default over + 1, i.e. no longer over) in every frame for >= hysteresis_ms.
 */
export interface OccupancyAlertState {
  exceeded: boolean;
  pending_since: number | null;
}

export type OccupancyAlertsState = [string, OccupancyAlertState][];

export class OccupancyAlerts {
  private readonly alerts: Map<string, OccupancyAlertState>;

  constructor(
    private readonly thresholds: readonly OccupancyThreshold[],
    state: OccupancyAlertsState,
  ) {
    const known = new Map(state);
    this.alerts = new Map(
      thresholds.map((th) => [
        th.label,
        { ...(known.get(th.label) ?? { exceeded: false, pending_since: null }) },
      ]),
    );
  }

  /** One frame's occupancy; pushes the alerts raised or cleared onto `events`. */
  step(ctx: EventContext, occupancy: Counts, events: AnalyticsEvent[]): void {
    for (const th of this.thresholds) {
      const a = this.alerts.get(th.label) as OccupancyAlertState;
      const count = countOf(occupancy, th.label);
      const under = th.under ?? th.over + 1;
      const flips = a.exceeded ? count < under : count > th.over;
      if (!flips) {
        a.pending_since = null;
        continue;
      }
      if (a.pending_since === null) a.pending_since = ctx.mediaMs;
      if (ctx.mediaMs - a.pending_since < th.hysteresis_ms) continue;
      a.exceeded = !a.exceeded;
      a.pending_since = null;
      events.push(
        makeEvent(ctx, `occupancy:${th.label}`, {
          kind: a.exceeded ? 'zone.occupancy_exceeded' : 'zone.occupancy_cleared',
          label: th.label,
          count,
          threshold: a.exceeded ? th.over : under,
        }),
      );
    }
  }

  /** Clears every raised alert (rule changed or removed). */
  endAll(ctx: EventContext, reason: EndReason, occupancy: Counts): AnalyticsEvent[] {
    const events: AnalyticsEvent[] = [];
    for (const th of this.thresholds) {
      const a = this.alerts.get(th.label) as OccupancyAlertState;
      if (!a.exceeded) continue;
      a.exceeded = false;
      a.pending_since = null;
      events.push(
        makeEvent(ctx, `occupancy:${th.label}`, {
          kind: 'zone.occupancy_cleared',
          label: th.label,
          count: countOf(occupancy, th.label),
          threshold: th.under ?? th.over + 1,
          reason,
        }),
      );
    }
    return events;
  }

  exceeded(): Record<string, boolean> {
    return Object.fromEntries([...this.alerts.entries()].map(([label, a]) => [label, a.exceeded]));
  }

  snapshot(): OccupancyAlertsState {
    return [...this.alerts.entries()].map(([label, a]) => [label, { ...a }]);
  }
}
