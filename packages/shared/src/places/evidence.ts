/**
 * The evidence of places (docs/EVIDENCE.md): the fields every zone and line event carries about its
 * picture, the paths the pictures are read at, and the ids those paths take. Pure; shared by the service that keeps
 * the pictures (results) and the tests and clients that read them.
 */

/** Why an event (or a track) has no picture; a closed list, the same in the API (`SnapshotReason`). */
export const SNAPSHOT_REASONS = ['frame_gone', 'capture_failed', 'not_captured'] as const;
export type SnapshotReason = (typeof SNAPSHOT_REASONS)[number];

/** What an event carries about its picture: a path when it has one, a reason when it has none. */
export type EventEvidence =
  { has_snapshot: true; snapshot_path: string } | { has_snapshot: false; snapshot_reason: SnapshotReason };

/** An event's id: 32 lowercase hex characters (docs/ANALYTICS.md, "Events and their ids"). */
export const EVENT_ID_RE = /^[0-9a-f]{32}$/;
/** A track id as inference gives it, within the bound the API accepts in a path. */
export const TRACK_ID_RE = /^[A-Za-z0-9._:-]{1,64}$/;

export const isSnapshotReason = (v: unknown): v is SnapshotReason =>
  typeof v === 'string' && (SNAPSHOT_REASONS as readonly string[]).includes(v);

/** `/v1/vision/tasks/{task_id}/events/{event_id}/snapshot` */
export function eventSnapshotPath(taskId: string, eventId: string): string {
  return `/v1/vision/tasks/${encodeURIComponent(taskId)}/events/${eventId}/snapshot`;
}

/** `/v1/vision/tasks/{task_id}/tracks/{track_id}/best_shot` */
export function bestShotPath(taskId: string, trackId: string): string {
  return `/v1/vision/tasks/${encodeURIComponent(taskId)}/tracks/${encodeURIComponent(trackId)}/best_shot`;
}

/** The evidence fields of an event of `taskId`: a path when a picture is stored, else why not. */
export function eventEvidence(
  taskId: string,
  eventId: string,
  stored: { ok: true } | { ok: false; reason: SnapshotReason },
): EventEvidence {
  return stored.ok
    ? { has_snapshot: true, snapshot_path: eventSnapshotPath(taskId, eventId) }
    : { has_snapshot: false, snapshot_reason: stored.reason };
}
