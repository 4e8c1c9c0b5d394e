import type { IncomingHttpHeaders } from 'node:http';
import { invalidRequest } from '../contract/errors';
import { REASON } from '../contract/reasons';

/** The public header a caller sends to say how long it will wait for an answer, in milliseconds. */
export const REQUEST_TIMEOUT_HEADER = 'x-request-timeout-ms';

/** The internal header carrying the caller's deadline (epoch ms) from the gateway to every service it reaches. */
export const DEADLINE_HEADER = 'x-vision-deadline';

/** The longest wait a caller may announce (10 minutes: the longest upload the gateway waits for). */
export const MAX_REQUEST_TIMEOUT_MS = 600_000;

/**
 * The shortest wait a caller may announce. The fastest image call takes about 50 ms inside the service
 * alone (docs/PERFORMANCE.md), before any network: a shorter deadline cannot be met by any call, so it is
 * the caller's mistake (400), not the service's failure to keep up (503 `deadline_exceeded`, which invites
 * a retry that would fail the same way).
 */
export const MIN_REQUEST_TIMEOUT_MS = 100;

/**
 * The deadline (epoch ms) a caller's X-Request-Timeout-Ms sets, counted from `now`; undefined when it
 * sent none. A value that is not a whole number of milliseconds from MIN_REQUEST_TIMEOUT_MS to
 * MAX_REQUEST_TIMEOUT_MS is 400 OP-TASK-REQUEST-INVALID (`invalid_field`, with the bounds in `details`).
 */
export function deadlineFromTimeout(value: string | string[] | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = (Array.isArray(value) ? value.join(',') : value).trim();
  const ms = /^\d{1,6}$/.test(text) ? Number(text) : Number.NaN;
  if (!(ms >= MIN_REQUEST_TIMEOUT_MS && ms <= MAX_REQUEST_TIMEOUT_MS))
    throw invalidRequest(
      ms < MIN_REQUEST_TIMEOUT_MS
        ? `${REQUEST_TIMEOUT_HEADER} is below ${MIN_REQUEST_TIMEOUT_MS} ms, shorter than any call can be answered in`
        : `${REQUEST_TIMEOUT_HEADER} must be a whole number of milliseconds from ${MIN_REQUEST_TIMEOUT_MS} to ${MAX_REQUEST_TIMEOUT_MS}`,
      REASON.invalid_field,
      { field: REQUEST_TIMEOUT_HEADER, minimum: MIN_REQUEST_TIMEOUT_MS, maximum: MAX_REQUEST_TIMEOUT_MS },
    );
  return now + ms;
}

/** The deadline an internal request carries (DEADLINE_HEADER), or undefined. */
export function deadlineOf(headers: IncomingHttpHeaders): number | undefined {
  const v = headers[DEADLINE_HEADER];
  const n = typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : NaN;
  return Number.isFinite(n) ? n : undefined;
}
