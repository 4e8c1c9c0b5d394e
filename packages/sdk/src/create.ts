/** The options and answer of the calls that create a task (stream, file) or an image call. */
import type { ProgressCallback } from './multipart';
import type { Task } from './types';

export interface CreateOptions {
  /**
   * The Idempotency-Key (UUID). Made once per call when absent and reused on every retry, so a
   * retried create is never charged twice. Keep it to resend the same create later yourself.
   */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface UploadOptions extends CreateOptions {
  /** Called as the request body goes out (restarts from 0 when the upload is retried). */
  onUploadProgress?: ProgressCallback;
}

/** What a create answered: the task, and whether it was new (201), a replay (200) or resolving (202). */
export interface CreatedTask {
  task: Task;
  httpStatus: 200 | 201 | 202;
  /** True on an idempotent replay (200): nothing was charged this time. */
  replayed: boolean;
  /** The key the create was sent with. */
  idempotencyKey: string;
}

export function created(status: number, task: Task, key: string): CreatedTask {
  const httpStatus = status === 200 || status === 202 ? status : 201;
  return { task, httpStatus, replayed: status === 200, idempotencyKey: key };
}
