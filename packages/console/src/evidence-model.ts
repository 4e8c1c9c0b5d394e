/**
 * Pure helpers of the events' pictures (no DOM): where an event's snapshot and its crop are read, what an event
 * without one says, and the tracks whose best shots a task's result frames name.
 */
/** The picture fields of an analytics event (docs/openapi.yaml, AnalyticsEvent). */
export interface EventPicture {
  id: string;
  has_snapshot?: boolean;
  snapshot_reason?: string;
  snapshot_path?: string;
}

/** The path of an event's snapshot (the frame with the object's box), or undefined when it has none. */
export function snapshotPath(taskId: string, e: EventPicture): string | undefined {
  if (e.has_snapshot !== true) return undefined;
  return (
    e.snapshot_path ??
    `/v1/vision/tasks/${encodeURIComponent(taskId)}/events/${encodeURIComponent(e.id)}/snapshot`
  );
}

/** The same picture cropped to the object (`?crop=true`). */
export function cropPath(path: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}crop=true`;
}

const REASONS: Record<string, string> = {
  frame_gone: 'its frame had already left the buffer',
  capture_failed: 'the picture could not be taken',
  not_captured: 'no picture was taken for it',
};

/** Why an event shows no picture, in words (an unknown reason is shown as the service gave it). */
export function noSnapshotText(reason: string | undefined): string {
  if (!reason) return 'no picture';
  return `no picture: ${REASONS[reason] ?? reason.replace(/_/g, ' ')}`;
}

const RULES: Record<string, string> = {
  too_small: 'small in every frame: its best-scoring box',
  at_edge: 'at the frame’s edge in every frame: its best-scoring box',
};

/**
 * What a best shot's `X-Best-Shot-Rule` says, in words: nothing when its box met the size rule, else which
 * fallback it is (an unknown rule is shown as the service gave it).
 */
export function bestShotRuleText(rule: string | undefined): string | undefined {
  if (rule === undefined || rule === 'met') return undefined;
  return RULES[rule] ?? rule.replace(/_/g, ' ');
}

/** What a track's tile says when its best shot cannot be shown (the 404's reason, else the error's code). */
export function noBestShotText(code: string, reason: string | undefined): string {
  if (code === 'OP-TASK-NO-SNAPSHOT') return noSnapshotText(reason);
  return `no picture: ${code === 'UNREADABLE' ? 'it could not be shown' : 'it could not be read'}`;
}

/** A track's first and last media times, as the tile shows them. */
export function trackTimes(t: Pick<TrackShot, 'firstMs' | 'lastMs'>, format: (ms: number) => string): string {
  return t.lastMs > t.firstMs ? `${format(t.firstMs)}–${format(t.lastMs)}` : format(t.firstMs);
}

/** What the list of tracks reads of a result frame (api.ts `Frame`). */
export interface TrackedFrame {
  frame_time_ms: number;
  objects: readonly { label: string; track_id?: string; best_shot_path?: string }[];
}

/** A tracked object whose best shot the result frames name. */
export interface TrackShot {
  trackId: string;
  label: string;
  /** Where its best shot is read (the frames' `best_shot_path`). */
  path: string;
  /** The media time the track was first and last seen at. */
  firstMs: number;
  lastMs: number;
}

/**
 * Adds the tracks of `frames` from index `from` on to `tracks` (by track id, in the order first seen): a track
 * is listed once one of its objects carries `best_shot_path`; later frames update its last time and path.
 */
export function collectTracks(
  frames: readonly TrackedFrame[],
  from: number,
  tracks: Map<string, TrackShot>,
): void {
  for (let i = Math.max(0, from); i < frames.length; i++) {
    const f = frames[i];
    for (const o of f.objects) {
      if (o.track_id === undefined) continue;
      const known = tracks.get(o.track_id);
      if (known) {
        known.lastMs = f.frame_time_ms;
        if (o.best_shot_path) known.path = o.best_shot_path;
      } else if (o.best_shot_path)
        tracks.set(o.track_id, {
          trackId: o.track_id,
          label: o.label,
          path: o.best_shot_path,
          firstMs: f.frame_time_ms,
          lastMs: f.frame_time_ms,
        });
    }
  }
}
