/**
 * An event as the API shows it (docs/EVIDENCE.md): the engine's event with what it says about its
 * picture. Added where events are read and sent, never in the engine: its events and ids stay as they are.
 */
import { eventEvidence, type EventEvidence, type SnapshotReason } from '@vision/shared';
import type { AnalyticsEvent } from '../analytics';

export type ShownEvent = AnalyticsEvent & EventEvidence;

/**
 * `stored`: the event's picture row (`null` its objects are stored, else why not); absent, no picture was ever
 * taken for this id (a replay's event under other rules, an event decided before pictures were kept).
 */
export function withEvidence(e: AnalyticsEvent, stored: SnapshotReason | null | undefined): ShownEvent {
  const reason: SnapshotReason | null = stored === undefined ? 'not_captured' : stored;
  return { ...e, ...eventEvidence(e.task_id, e.id, reason === null ? { ok: true } : { ok: false, reason }) };
}
