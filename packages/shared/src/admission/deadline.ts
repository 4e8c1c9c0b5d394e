import type { IncomingHttpHeaders } from 'node:http';
import { invalidRequest } from '../errors';
import { REASON } from '../reasons';

/** The public header a caller sends to say how long it will wait for an answer, in milliseconds. */
export const REQUEST_TIMEOUT_HEADER = 'x-request-timeout-ms';

/** The internal header carrying the caller's deadline (epoch ms) from the gateway to every service it reaches. */
export const DEADLINE_HEADER = 'x-vision-deadline';

/** The longest wait a caller may announce (10 minutes: the longest upload the gateway waits for). */
export const MAX_REQUEST_TIMEOUT_MS = 600_000;

/**
 * The deadline (epoch ms) a caller's X-Request-Timeout-Ms sets, counted from `now`; undefined when it
 * sent none. A value that is not a whole number of milliseconds from 1 to MAX_REQUEST_TIMEOUT_MS is 400.
 */
export function deadlineFromTimeout(value: string | string[] | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  if (!/^\d{1,6}$/.test(text.trim()) || Number(text) < 1 || Number(text) > MAX_REQUEST_TIMEOUT_MS)
    throw invalidRequest(
      `${REQUEST_TIMEOUT_HEADER} must be a whole number of milliseconds from 1 to ${MAX_REQUEST_TIMEOUT_MS}`,
      REASON.invalid_field,
      { field: REQUEST_TIMEOUT_HEADER },
    );
  return now + Number(text);
}

/** The deadline an internal request carries (DEADLINE_HEADER), or undefined. */
export function deadlineOf(headers: IncomingHttpHeaders): number | undefined {
  const v = headers[DEADLINE_HEADER];
  const n = typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : NaN;
  return Number.isFinite(n) ? n : undefined;
}
