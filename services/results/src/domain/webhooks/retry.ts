/**
 * What one delivery attempt's outcome means for the delivery: delivered, retried later (exponential backoff
 * with jitter, or the receiver's Retry-After), dead (past the retry horizon), or the endpoint disabled (410).
 * Pure: the caller passes the clock reading and a random number.
 */

/** How an attempt ended, as the delivery log records it. */
export type AttemptOutcome =
  | 'delivered'
  | 'http_error'
  | 'rate_limited'
  | 'gone'
  | 'redirect'
  | 'timeout'
  | 'unreachable'
  | 'refused_address'
  | 'secret_unavailable';

export interface AttemptResult {
  outcome: AttemptOutcome;
  statusCode?: number;
  /** Seconds from a Retry-After header (429, 503), when the receiver sent one we could read. */
  retryAfterS?: number;
}

export interface RetryPolicy {
  baseMs: number;
  maxMs: number;
  horizonMs: number;
}

export type Decision =
  { kind: 'delivered' } | { kind: 'retry'; at: Date } | { kind: 'dead' } | { kind: 'disable_endpoint' };

/** Classifies an HTTP answer: 2xx delivered, 410 gone, 429 rate limited, 3xx a redirect (never followed). */
export function outcomeOfStatus(status: number): AttemptOutcome {
  if (status >= 200 && status < 300) return 'delivered';
  if (status === 410) return 'gone';
  if (status === 429) return 'rate_limited';
  if (status >= 300 && status < 400) return 'redirect';
  return 'http_error';
}

/**
 * Delay before retry number `attempt` (1 = the first retry): base * 2^(attempt-1), capped, with "equal jitter"
 * (half fixed, half random) so that a receiver coming back is not hit by every delivery at the same instant.
 */
export function backoffMs(
  attempt: number,
  policy: Pick<RetryPolicy, 'baseMs' | 'maxMs'>,
  random: number,
): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(30, Math.max(0, attempt - 1)));
  return Math.round(exp / 2 + (exp / 2) * Math.min(1, Math.max(0, random)));
}

/**
 * The delivery's next step after attempt number `attempts` ended with `result`. `giveUpAt` is the end of the
 * retry horizon (first attempt + 24 h by default): a retry that would fall after it makes the delivery dead.
 */
export function decide(
  result: AttemptResult,
  attempts: number,
  now: Date,
  giveUpAt: Date,
  policy: RetryPolicy,
  random: number,
): Decision {
  if (result.outcome === 'delivered') return { kind: 'delivered' };
  if (result.outcome === 'gone') return { kind: 'disable_endpoint' };
  let delay = backoffMs(attempts, policy, random);
  if (result.retryAfterS !== undefined && (result.outcome === 'rate_limited' || result.statusCode === 503))
    delay = Math.max(1_000, result.retryAfterS * 1000);
  const at = new Date(now.getTime() + delay);
  if (at.getTime() > giveUpAt.getTime()) return { kind: 'dead' };
  return { kind: 'retry', at };
}
