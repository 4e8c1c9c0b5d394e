import { limiterKeys } from '@vision/shared';
import type { SubjectLimits } from './limits';

/**
 * What GATEWAY_REDIS_PREFIX may hold: at most 100 of A-Z a-z 0-9 . _ -, never `:`. Every key the gateway writes is the
 * prefix, then `gw:`; as no prefix holds a `:`, two different prefixes never give one key, whatever the subjects: where
 * one prefix is the start of the other, the longer one's next characters would have to spell `gw:`.
 */
export const REDIS_PREFIX_RE = /^[A-Za-z0-9._-]{0,100}$/;

/** The namespace of the gateway's limiter in Redis under a deployment's GATEWAY_REDIS_PREFIX. */
export const gatewayKeyPrefix = (prefix: string): string => `${prefix}gw`;

/** The limiter keys of a subject: its requests per second, and its requests in flight (use-cases/admit.ts). */
export const rateKeyOf = (subject: string): string => `qps:${subject}`;
export const slotKeyOf = (subject: string): string => `conc:${subject}`;

/** Every Redis key the gateway writes for `subject` under `limits`, in the deployment of GATEWAY_REDIS_PREFIX `prefix`. */
export function gatewayRedisKeys(prefix: string, subject: string, limits: SubjectLimits): string[] {
  const ns = gatewayKeyPrefix(prefix);
  const opts = { perSecond: limits.qps, burst: limits.burst };
  const rate = limiterKeys(ns, rateKeyOf(subject), opts);
  return [rate.rate, rate.burst, limiterKeys(ns, slotKeyOf(subject), opts).slots];
}
