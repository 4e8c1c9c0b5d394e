import type { Kind } from './ledger';

export type QuotaEventType = 'charged' | 'refunded' | 'held' | 'settled' | 'exhausted';

/** A `vision.quota-events` value (docs/INTERNAL.md). */
export interface QuotaEvent {
  schema: 1;
  event_id: string;
  type: QuotaEventType;
  subject: string;
  kind: Kind;
  units: number;
  day: string;
  occurred_at: string;
  /** `exhausted` only: the day's limit, the units used, and when the day resets. */
  limit?: number;
  used?: number;
  resets_at?: string;
}

export function quotaEvent(
  eventId: string,
  type: QuotaEventType,
  subject: string,
  kind: Kind,
  units: number,
  day: string,
  at: Date,
): QuotaEvent {
  return { schema: 1, event_id: eventId, type, subject, kind, units, day, occurred_at: at.toISOString() };
}

/**
 * True when a change that brought the day's used units from `usedBefore` to `usedBefore + units` used up the
 * limit: the day's `exhausted` event is written with that change (once each time the day fills up).
 */
export function fillsTheDay(usedBefore: number, units: number, limit: number): boolean {
  return units > 0 && usedBefore < limit && usedBefore + units >= limit;
}
