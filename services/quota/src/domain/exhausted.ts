import { ApiError } from '@vision/shared';
import { nextResetAt, secondsUntilReset } from './day';
import { type Kind, remaining, type Usage } from './ledger';

/** The 429 `OP-QUOTA-DAILY-EXHAUSTED` of a day that cannot take more units, with its figures and Retry-After. */
export function exhausted(kind: Kind, usage: Usage, now: Date, extra?: Record<string, unknown>): ApiError {
  return new ApiError(
    'OP-QUOTA-DAILY-EXHAUSTED',
    `Daily ${kind} quota exhausted; it resets at 00:00 (UTC+8)`,
    {
      kind,
      limit: usage.limit,
      used: usage.used,
      held: usage.held,
      remaining: remaining(usage),
      resets_at: nextResetAt(now),
      ...extra,
    },
    { 'Retry-After': String(secondsUntilReset(now)) },
  );
}
