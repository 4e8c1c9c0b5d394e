import { ApiError, metrics, type Limiter, type Logger } from '@vision/shared';
import { retryAfterSeconds, type SubjectLimits } from '../domain/limits';
import { rateKeyOf, slotKeyOf } from '../domain/redis-keys';

/**
 * Admits one request of a subject under its QPS (token bucket) and concurrency limits, shared by all keys of the
 * subject. Answers the function that gives the concurrency slot back (call it once the response is over; extra
 * calls do nothing); throws 429 `OP-QUOTA-RATE-LIMITED` with Retry-After when either limit is reached.
 */
export async function admit(
  limiter: Limiter,
  subject: string,
  limits: SubjectLimits,
  logger: Logger,
): Promise<() => void> {
  const rate = await limiter.consumeRate(rateKeyOf(subject), { perSecond: limits.qps, burst: limits.burst });
  if (!rate.allowed) {
    metrics.rateLimited.inc({ reason: 'qps' });
    throw new ApiError(
      'OP-QUOTA-RATE-LIMITED',
      'Too many requests for this subject, retry later',
      { limit: 'qps' },
      { 'Retry-After': retryAfterSeconds(rate.retryAfterMs) },
    );
  }
  const release = await limiter.acquireSlot(slotKeyOf(subject), limits.concurrency);
  if (!release) {
    metrics.rateLimited.inc({ reason: 'concurrency' });
    throw new ApiError(
      'OP-QUOTA-RATE-LIMITED',
      'Too many concurrent requests for this subject, retry later',
      { limit: 'concurrency' },
      { 'Retry-After': '1' },
    );
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    release().catch((err: unknown) => logger.warn({ err }, 'releasing a concurrency slot failed'));
  };
}
