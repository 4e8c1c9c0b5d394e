import type { RateLimitOptions } from './port';

/** Where a limiter of `keyPrefix` keeps the sustained rate (perSecond, burst) of every key; its burst is under `:burst`. */
export const rateKeyPrefix = (keyPrefix: string, opts: RateLimitOptions): string =>
  `${keyPrefix}:rate:${opts.perSecond}:${opts.burst}`;

/** The sorted set of a key's concurrency slots, for a limiter of `keyPrefix`. */
export const slotsKey = (keyPrefix: string, key: string): string => `${keyPrefix}:slots:${key}`;

/**
 * The Redis keys a limiter of `keyPrefix` (FlexibleLimiter, limiter.ts) writes for `key`: its sustained rate and its
 * burst under `opts` (rate-limiter-flexible stores a key as `<its own keyPrefix>:<key>`), and its concurrency slots.
 */
export function limiterKeys(
  keyPrefix: string,
  key: string,
  opts: RateLimitOptions,
): { rate: string; burst: string; slots: string } {
  const rate = rateKeyPrefix(keyPrefix, opts);
  return { rate: `${rate}:${key}`, burst: `${rate}:burst:${key}`, slots: slotsKey(keyPrefix, key) };
}
