import type { ImageType } from './image-type';

/** `YYYY-MM-DD` of the UTC day of `at`. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** Object key of one uploaded image: images/<UTC day>/<task_id>/<seq>.<ext>. The caller never chooses it. */
export function imageObjectKey(at: Date, taskId: string, seq: number, type: ImageType): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(taskId))
    throw new Error(`task id not usable in an object key: ${taskId}`);
  if (!Number.isInteger(seq) || seq < 0) throw new Error(`bad seq ${seq}`);
  return `images/${utcDay(at)}/${taskId}/${seq}.${type}`;
}

export const IMAGE_PREFIX = 'images/';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The moment before which uploaded images and stored results are deleted. */
export function retentionCutoff(now: Date, retentionDays: number): Date {
  return new Date(now.getTime() - retentionDays * DAY_MS);
}

/** When the results of a call made at `createdAt` are deleted. */
export function resultExpiresAt(createdAt: Date, retentionDays: number): Date {
  return new Date(createdAt.getTime() + retentionDays * DAY_MS);
}
