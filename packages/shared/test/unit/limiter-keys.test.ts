import { RateLimiterMemory } from 'rate-limiter-flexible';
import { limiterKeys, rateKeyPrefix } from '../../src/limiter/keys';

describe('the Redis keys of a limiter', () => {
  it('are those rate-limiter-flexible writes for the limiters FlexibleLimiter makes, and the slots set', () => {
    const opts = { perSecond: 20, burst: 40 };
    const prefix = rateKeyPrefix('ns.gw', opts);
    const sustained = new RateLimiterMemory({ points: 20, duration: 1, keyPrefix: prefix });
    const burst = new RateLimiterMemory({ points: 40, duration: 2, keyPrefix: `${prefix}:burst` });
    expect(limiterKeys('ns.gw', 'qps:acme', opts)).toEqual({
      rate: sustained.getKey('qps:acme'),
      burst: burst.getKey('qps:acme'),
      slots: 'ns.gw:slots:qps:acme',
    });
    expect(sustained.getKey('qps:acme')).toBe('ns.gw:rate:20:40:qps:acme');
  });
});
