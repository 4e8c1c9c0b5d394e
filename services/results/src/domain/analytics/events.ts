import { hash } from 'node:crypto';

/** What the engine reports. Every field is derived from the rules and the frames: nothing from the clock. */
export type AnalyticsEventKind =
  | 'zone.entered'
  | 'zone.exited'
  | 'zone.dwell_exceeded'
  | 'zone.occupancy_exceeded'
  | 'zone.occupancy_cleared'
  | 'line.crossed';

/** Why a visit or an occupancy alert ended other than by the frames themselves. */
export type EndReason = 'exited' | 'lost' | 'rule_changed' | 'rule_removed';

export interface AnalyticsEvent {
  /** sha256 of (task id, rule id, rule version, key, kind, seq), 32 hex characters; see eventId. */
  id: string;
  kind: AnalyticsEventKind;
  task_id: string;
  rule_id: string;
  rule_version: number;
  /** The frame the event was decided on (for rule changes: the last frame processed before them). */
  seq: number;
  media_ms: number;
  /** zone.* events of a visit: the visit (first track id and the seq its entry was decided on). */
  visit_id?: string;
  track_id?: string;
  label?: string;
  dwell_ms?: number;
  direction?: 'in' | 'out';
  /** Occupancy events: the count that crossed the threshold, and the threshold. */
  count?: number;
  threshold?: number;
  /** Coverage zones: the covered fraction of the zone at that frame. */
  coverage?: number;
  reason?: EndReason;
}

/**
 * The event's id: the same task, rule version, key, kind and frame always give the same id, so a replay of the
 * same frames under the same rules writes byte-identical events, and a consumer can drop repeats by id.
 */
export function eventId(
  taskId: string,
  ruleId: string,
  ruleVersion: number,
  key: string,
  kind: AnalyticsEventKind,
  seq: number,
): string {
  return hash('sha256', JSON.stringify([taskId, ruleId, ruleVersion, key, kind, seq]), 'hex').slice(0, 32);
}

/** Fields every event of one rule shares; the engine fills them in. */
export interface EventContext {
  taskId: string;
  ruleId: string;
  ruleVersion: number;
  seq: number;
  mediaMs: number;
}

type EventBody = Omit<AnalyticsEvent, 'id' | 'task_id' | 'rule_id' | 'rule_version' | 'seq' | 'media_ms'>;

/** Builds an event; `key` is the visit id, track id or label the event is about. */
export function makeEvent(ctx: EventContext, key: string, body: EventBody): AnalyticsEvent {
  return {
    id: eventId(ctx.taskId, ctx.ruleId, ctx.ruleVersion, key, body.kind, ctx.seq),
    task_id: ctx.taskId,
    rule_id: ctx.ruleId,
    rule_version: ctx.ruleVersion,
    seq: ctx.seq,
    media_ms: ctx.mediaMs,
    ...body,
  };
}
