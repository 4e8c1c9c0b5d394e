import type { Kind } from './ledger';

export type QuotaEventType = 'charged' | 'refunded' | 'held' | 'settled';

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
