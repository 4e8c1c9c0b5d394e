/** The ledger's events as the store writes them: their outbox rows, and the metrics each counts once committed. */
import { DEFAULT_OUTBOX_TABLE, TOPICS, metrics, outboxRow } from '@vision/shared';
import type { QuotaEvent, QuotaEventType } from '../domain/events';
import type { Kind } from '../domain/ledger';

/** The outbox row of a quota event, keyed by subject. */
export const eventRow = (event: QuotaEvent, at: Date) =>
  outboxRow(DEFAULT_OUTBOX_TABLE, TOPICS.quotaEvents, event.subject, event, at);

/** vision_quota_* for one committed ledger event. */
export function countEvent(type: QuotaEventType, kind: Kind, units: number): void {
  if (type === 'charged') metrics.quotaCharges.inc({ kind }, units);
  else if (type === 'refunded') metrics.quotaRefunds.inc({ kind }, units);
  else if (type === 'held') metrics.quotaHolds.inc({ kind, outcome: 'placed' });
  else if (type === 'exhausted') return;
  else {
    // A settled hold charges the units that succeeded; the rest is released.
    metrics.quotaHolds.inc({ kind, outcome: 'settled' });
    if (units > 0) metrics.quotaCharges.inc({ kind }, units);
  }
}
