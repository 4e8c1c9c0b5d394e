/**
 * Takes the pictures a step of a task's evaluation needs (domain/evidence/plan.ts) and puts them in the object
 * store, before the step's transaction names them (docs/EVIDENCE.md). Each picture's objects have a
 * key derived from the task and the event id (or track and frame): a step run again after a crash finds the
 * objects its first run put and takes nothing again. A frame that left inference's ring is `frame_gone` at once;
 * a failing inference or object store is `capture_failed` within the breaker's time limit: nothing waits.
 */
import type { Identity, InferencePictures, Logger, ObjectStore, SnapshotReason } from '@vision/shared';
import { evidenceKeys, type CaptureItem } from '../domain/evidence/plan';

export interface CaptureDeps {
  /** Absent: no picture is taken (every event says `capture_failed`). */
  inference?: InferencePictures;
  objects: ObjectStore;
  logger: Logger;
  /** Pictures asked for at once. */
  concurrency?: number;
}

export interface Captured {
  item: CaptureItem;
  /** null: both objects are stored. */
  reason: SnapshotReason | null;
}

const JPEG = { contentType: 'image/jpeg' };

export class EvidenceCapture {
  constructor(private readonly deps: CaptureDeps) {}

  /** Asks inference to keep the job's recent frames (a task with rules); a failure is only logged. */
  async arm(taskId: string, subject: string): Promise<void> {
    try {
      await this.deps.inference?.armRing(identityFor(subject, taskId), taskId);
    } catch (err) {
      this.deps.logger.warn({ err, task_id: taskId }, 'could not ask inference to keep frames for pictures');
    }
  }

  /** Takes `items` (in parallel, `concurrency` at a time); the answers in the same order. */
  async take(taskId: string, subject: string, items: readonly CaptureItem[]): Promise<Captured[]> {
    const out: Captured[] = new Array<Captured>(items.length);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < items.length; i = next++)
        out[i] = { item: items[i], reason: await this.one(taskId, subject, items[i]) };
    };
    const n = Math.min(items.length, this.deps.concurrency ?? 4);
    await Promise.all(Array.from({ length: n }, worker));
    return out;
  }

  private async one(taskId: string, subject: string, item: CaptureItem): Promise<SnapshotReason | null> {
    const { inference, objects, logger } = this.deps;
    const keys = evidenceKeys(taskId, item);
    try {
      const [full, crop] = await Promise.all([objects.stat(keys.full), objects.stat(keys.crop)]);
      if (full && crop) return null; // put by an earlier run of this step
      if (!inference) return 'capture_failed';
      const pic = await inference.picture(identityFor(subject, taskId), taskId, item.seq, item.drawing);
      if (!pic) return 'frame_gone';
      await objects.put(keys.crop, pic.crop, { ...JPEG, size: pic.crop.length });
      await objects.put(keys.full, pic.jpeg, { ...JPEG, size: pic.jpeg.length });
      return null;
    } catch (err) {
      logger.warn({ err, task_id: taskId, seq: item.seq }, 'picture not taken');
      return 'capture_failed';
    }
  }
}

/** The identity of results' calls for a task's pictures: the task's owner, a request id naming the task. */
function identityFor(subject: string, taskId: string): Identity {
  return { subject, requestId: `evidence-${taskId}` };
}
