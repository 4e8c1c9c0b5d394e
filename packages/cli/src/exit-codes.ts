import { VisionApiError, VisionNetworkError, VisionTimeoutError } from '@vision/sdk';

/** Exit statuses of `vision` (documented in `vision --help` and docs/SDK.md). */
export const EXIT = {
  ok: 0,
  /** The service answered an error, or could not be reached. */
  api: 1,
  /** Wrong command line or missing configuration: nothing was sent. */
  usage: 2,
  /** The daily quota is used up (OP-QUOTA-DAILY-EXHAUSTED). */
  quota: 3,
  /** `--wait` ended on a task that did not succeed, or ran out of time. */
  task: 4,
} as const;

export const EXIT_HELP = `Exit status:
  0  success
  1  the service answered an error (message and request id on stderr), or could not be reached
  2  usage error: bad arguments or missing VISION_BASE_URL / VISION_API_KEY
  3  daily quota exhausted (OP-QUOTA-DAILY-EXHAUSTED)
  4  --wait: the task ended stopped, failed or refunded, or the wait timed out`;

/** A command-line mistake found after parsing (exit 2). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A waited-for task that did not succeed (exit 4). */
export class TaskOutcomeError extends Error {
  override readonly name = 'TaskOutcomeError';
}

/** The exit status and the one-line message for an error thrown by a command. */
export function describeFailure(err: unknown): { code: number; message: string } {
  if (err instanceof UsageError) return { code: EXIT.usage, message: err.message };
  if (err instanceof TaskOutcomeError) return { code: EXIT.task, message: err.message };
  if (err instanceof VisionTimeoutError) return { code: EXIT.task, message: err.message };
  if (err instanceof VisionApiError) {
    const reason = err.reason ? ` (${err.reason})` : '';
    const rid = err.requestId ? ` [request id ${err.requestId}]` : '';
    return {
      code: err.code === 'OP-QUOTA-DAILY-EXHAUSTED' ? EXIT.quota : EXIT.api,
      message: `${err.code}: ${err.message}${reason}${rid}`,
    };
  }
  if (err instanceof VisionNetworkError) return { code: EXIT.api, message: err.message };
  const e = err as { code?: string; message?: string };
  if (e?.code === 'ENOENT' || e?.code === 'EISDIR' || e?.code === 'EACCES')
    return { code: EXIT.usage, message: e.message ?? String(err) };
  return { code: EXIT.api, message: e?.message ?? String(err) };
}
