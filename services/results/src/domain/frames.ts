import { bestShotPath, TRACK_ID_RE, type DetectedObject } from '@vision/shared';
import type { FrameMessage } from './messages';

/**
 * How a detection is kept in the `objects` jsonb column: short keys, the box as [cx, cy, w, h]. At
 * millions of frames per task the stored form is about half the size of the public one.
 */
export interface StoredObject {
  l: string;
  s: number;
  b: [number, number, number, number];
  t?: string;
}

/**
 * What the analytics of places noted on an evaluated frame: `o[i]` the zones stored object i is counted in,
 * `z` each zone's occupancy by label (and a coverage zone's covered fraction) after the frame.
 */
export interface FrameZones {
  o: string[][];
  z: Record<string, { counts: Record<string, number>; coverage?: number }>;
}

/** One stored frame (a row of result_frames). */
export interface StoredFrame {
  taskId: string;
  seq: number;
  frameId: string;
  frameTimeMs: number;
  width: number;
  height: number;
  objects: StoredObject[];
  /** Set once results evaluated the task's zones over this frame. */
  zones?: FrameZones;
}

/** A result frame as the public API shows it (SPEC.md 2.2). */
export interface PublicFrame {
  frame_id: string;
  frame_time_ms: number;
  image: { width: number; height: number };
  objects: (DetectedObject & { zones?: string[]; best_shot_path?: string })[];
  objects_total?: number;
  zones?: FrameZones['z'];
}

/**
 * Turns a `frame` message into the row to store. Detections under the frame's inference lower bound are
 * dropped: SPEC.md 4.4 rule 3 says they are not stored (inference should not send them anyway).
 */
export function toStoredFrame(msg: FrameMessage): StoredFrame {
  const lowerBound = msg.lower_bound ?? 0;
  const objects: StoredObject[] = [];
  for (const o of msg.objects) {
    if (o.score < lowerBound) continue;
    const stored: StoredObject = {
      l: o.label,
      s: o.score,
      b: [o.bbox.cx, o.bbox.cy, o.bbox.width, o.bbox.height],
    };
    if (o.track_id !== undefined) stored.t = String(o.track_id);
    objects.push(stored);
  }
  return {
    taskId: msg.task_id,
    seq: msg.seq,
    frameId: msg.frame_id,
    frameTimeMs: msg.frame_time_ms,
    width: msg.image.width,
    height: msg.image.height,
    objects,
  };
}

function toPublicObject(o: StoredObject): DetectedObject {
  const out: DetectedObject = {
    label: o.l,
    score: o.s,
    bbox: { format: 'cxcywh_normalized', cx: o.b[0], cy: o.b[1], width: o.b[2], height: o.b[3] },
  };
  if (o.t !== undefined) out.track_id = o.t;
  return out;
}

/**
 * The public frame with the read-time filter applied: objects scoring at least `threshold` are kept.
 * The frame itself is always returned (even with no object left) so that the timeline stays complete. An
 * evaluated frame of a task with zones carries its zone counts, and each object the zones it is counted in and,
 * tracked, the path of its track's best picture.
 */
export function toPublicFrame(frame: StoredFrame, threshold: number, withTotal: boolean): PublicFrame {
  const out: PublicFrame = {
    frame_id: frame.frameId,
    frame_time_ms: frame.frameTimeMs,
    image: { width: frame.width, height: frame.height },
    objects: [],
  };
  const zones = frame.zones;
  frame.objects.forEach((o, i) => {
    if (o.s < threshold) return;
    if (!zones) return out.objects.push(toPublicObject(o));
    // An evaluated frame's tracked object names its track's best picture (docs/EVIDENCE.md).
    const best =
      o.t !== undefined && TRACK_ID_RE.test(o.t) ? { best_shot_path: bestShotPath(frame.taskId, o.t) } : {};
    out.objects.push({ ...toPublicObject(o), zones: zones.o[i] ?? [], ...best });
  });
  if (withTotal) out.objects_total = frame.objects.length;
  if (zones) out.zones = zones.z;
  return out;
}
