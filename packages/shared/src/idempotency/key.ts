/**
 * Idempotency-Key handling shared by every create endpoint (SPEC.md 4.1, 4.2, 4.6): one parser, one
 * UUID check, one answer for each fault, and one bounded wait for a duplicate whose first request
 * is still being handled.
 */
import { ApiError, invalidRequest } from '../contract/errors';
import { REASON } from '../contract/reasons';

export const IDEMPOTENCY_HEADER = 'idempotency-key';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Standard UUID form (8-4-4-4-12 hex digits, any version). */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}

/**
 * The Idempotency-Key of a request, in its stored (lower-case) form. Missing or not a UUID: 400
 * OP-TASK-REQUEST-INVALID, `details.reason` `idempotency_key`, `details.problem` `missing` or `not_uuid`.
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string {
  const key = Array.isArray(header) ? header.join(',') : header;
  if (key === undefined || key === '')
    throw invalidRequest('The Idempotency-Key header is required', REASON.idempotency_key, {
      problem: 'missing',
    });
  if (!isUuid(key))
    throw invalidRequest(
      'The Idempotency-Key header must be a UUID (8-4-4-4-12 hex digits)',
      REASON.idempotency_key,
      {
        problem: 'not_uuid',
      },
    );
  return key.toLowerCase();
}

/** The same key was used for a request with another meaning. */
export function idempotencyMismatch(): ApiError {
  return invalidRequest(
    'This Idempotency-Key was used for a different request; use a new key for a new request',
    REASON.idempotency_mismatch,
  );
}

/** The first request with this key is still being handled after the wait: retry with the same key. */
export function idempotencyInProgress(): ApiError {
  return new ApiError(
    'OP-SYS-UNAVAILABLE',
    'A request with this Idempotency-Key is still being processed; retry with the same key',
    { reason: REASON.in_progress },
    { 'Retry-After': '1' },
  );
}

/**
 * Asks `look` until it gives an answer (not undefined) or `waitMs` has passed; then resolves
 * with `onTimeout()` (which may throw, for example idempotencyInProgress()).
 */
export async function awaitFirstRequest<T>(
  look: () => Promise<T | undefined>,
  opts: { waitMs: number; pollMs?: number; onTimeout: () => T | Promise<T> },
): Promise<T> {
  const deadline = Date.now() + opts.waitMs;
  for (;;) {
    const answer = await look();
    if (answer !== undefined) return answer;
    if (Date.now() >= deadline) return opts.onTimeout();
    await new Promise((r) => setTimeout(r, Math.min(opts.pollMs ?? 50, Math.max(1, deadline - Date.now()))));
  }
}
