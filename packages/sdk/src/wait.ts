import { VisionTimeoutError } from './errors';
import { TERMINAL_STATUSES, type Task, type TaskStatus } from './types';

export interface WaitOptions {
  /** Give up after this many ms (default 10 minutes) with VisionTimeoutError. */
  timeoutMs?: number;
  /** Stop waiting at these statuses instead of the terminal ones (e.g. `['running']`). */
  until?: readonly TaskStatus[];
  /** First delay between polls in ms (default 500); it grows by half each poll the status stays. */
  minIntervalMs?: number;
  /** Longest delay between polls in ms (default 5,000). */
  maxIntervalMs?: number;
  /** Called with each state seen (for a spinner or a log). */
  onPoll?: (task: Task) => void;
  signal?: AbortSignal;
}

const delay = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/**
 * Polls `get` until the task reaches a wanted status. `resolving` (SPEC.md section 3: the service is
 * confirming whether the backend accepted the task) is just another status to wait through: the
 * create is never resent with a new key, and the task becomes running or refunded on its own.
 */
export async function waitForTask(
  get: (taskId: string) => Promise<Task>,
  taskId: string,
  opts: WaitOptions = {},
): Promise<Task> {
  const wanted = opts.until ?? TERMINAL_STATUSES;
  const deadline = Date.now() + (opts.timeoutMs ?? 10 * 60_000);
  const minInterval = opts.minIntervalMs ?? 500;
  const maxInterval = opts.maxIntervalMs ?? 5000;
  let interval = minInterval;
  let last: Task | undefined;
  for (;;) {
    const task = await get(taskId);
    opts.onPoll?.(task);
    if (wanted.includes(task.status as TaskStatus)) return task;
    // Back off while nothing changes; look again soon after a change.
    interval = last && last.status === task.status ? Math.min(maxInterval, interval * 1.5) : minInterval;
    last = task;
    const left = deadline - Date.now();
    if (left <= 0) throw new VisionTimeoutError(`task ${taskId} is still ${task.status} after waiting`, task);
    await delay(Math.min(interval, left), opts.signal);
  }
}
