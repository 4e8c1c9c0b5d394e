import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import {
  BurstyRateLimiter,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { ConfigError, type CommonConfig } from '../config/config';
import type { Logger } from '../telemetry/logger';
import { redactUrl } from '../secrets/redact';
import type { LimitDecision, Limiter, RateLimitOptions } from './port';
import { rateKeyPrefix, slotsKey } from './keys';

type Consumer = Pick<RateLimiterAbstract, 'consume'> | BurstyRateLimiter;

/** Default lease of a concurrency slot whose holder never releases it. */
export const DEFAULT_SLOT_LEASE_MS = 10 * 60 * 1000;

/**
 * How a (perSecond, burst) pair maps onto rate-limiter-flexible: a sustained limiter of perSecond
 * points per 1 s window (for rates under 1/s, one point per ceil(1/perSecond) s), plus, when burst >
 * 0, a burst limiter of `burst` points per ceil(burst/perSecond) s combined with BurstyRateLimiter.
 * So a key may spend perSecond + burst requests at once; the sustained part comes back every second,
 * the burst allowance after burst/perSecond seconds. Exported for tests and documentation.
 */
export function rateWindows(opts: RateLimitOptions): {
  sustained: { points: number; duration: number };
  burst?: { points: number; duration: number };
} {
  const perSecond = opts.perSecond;
  if (!(perSecond > 0) || !Number.isFinite(perSecond))
    throw new RangeError('perSecond must be a positive number');
  if (!(opts.burst >= 0) || !Number.isFinite(opts.burst)) throw new RangeError('burst must be >= 0');
  const duration = perSecond >= 1 ? 1 : Math.ceil(1 / perSecond);
  const sustained = { points: Math.max(1, Math.floor(perSecond * duration)), duration };
  const burstPoints = Math.floor(opts.burst);
  if (burstPoints === 0) return { sustained };
  return {
    sustained,
    burst: { points: burstPoints, duration: Math.max(1, Math.ceil(burstPoints / perSecond)) },
  };
}

// Concurrency slots as a sorted set of holder ids scored by lease expiry (Redis server time, ms).
const ACQUIRE_SLOT_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1`;

type SlotScriptClient = Redis & {
  visionAcquireSlot(key: string, limit: number, leaseMs: number, id: string): Promise<number>;
};

/** In-memory slots with a lease per holder. */
class MemorySlots {
  private readonly slots = new Map<string, Map<string, number>>();
  acquire(key: string, limit: number, leaseMs: number, id: string): boolean {
    const now = Date.now();
    let held = this.slots.get(key);
    if (!held) {
      held = new Map();
      this.slots.set(key, held);
    }
    for (const [holder, expires] of held) if (expires <= now) held.delete(holder);
    if (held.size >= limit) return false;
    held.set(id, now + leaseMs);
    return true;
  }
  release(key: string, id: string): void {
    const held = this.slots.get(key);
    if (!held) return;
    held.delete(id);
    if (held.size === 0) this.slots.delete(key);
  }
}

export interface FlexibleLimiterOptions {
  /** ioredis client for distributed mode; without it everything is in memory (standalone). */
  redis?: Redis;
  /** Namespaces every key, e.g. `gw` (keys.ts names them). */
  keyPrefix: string;
  logger?: Logger;
}

/**
 * Limiter on rate-limiter-flexible. With a Redis client, limits are shared by every replica; each
 * Redis limiter has an in-memory `insuranceLimiter` with the same limits, so while Redis is
 * unreachable requests are still limited, per process (mode() says 'memory-fallback' and check()
 * reports degraded). Without Redis it is the standalone in-memory limiter.
 *
 * Concurrency slots are not a rate: each holder gets its own lease (a sorted set in Redis, a map in
 * memory), released explicitly or expiring after `leaseMs` when the holder dies.
 */
export class FlexibleLimiter implements Limiter {
  private readonly rateLimiters = new Map<string, Consumer>();
  private readonly memorySlots = new MemorySlots();
  private readonly redis?: SlotScriptClient;
  private readonly keyPrefix: string;
  private readonly logger?: Logger;
  private redisDownSince?: number;

  constructor(opts: FlexibleLimiterOptions) {
    this.keyPrefix = opts.keyPrefix;
    this.logger = opts.logger;
    if (opts.redis) {
      const redis = opts.redis as SlotScriptClient;
      redis.defineCommand('visionAcquireSlot', { numberOfKeys: 1, lua: ACQUIRE_SLOT_LUA });
      redis.on('ready', () => {
        if (this.redisDownSince !== undefined)
          this.logger?.info(
            { down_ms: Date.now() - this.redisDownSince },
            'Redis reachable again; shared limits restored',
          );
        this.redisDownSince = undefined;
      });
      const down = (err?: unknown) => {
        if (this.redisDownSince !== undefined) return;
        this.redisDownSince = Date.now();
        this.logger?.warn({ err }, 'Redis unreachable; limits fall back to this process’s memory');
      };
      redis.on('error', down);
      redis.on('close', () => down());
      redis.on('end', () => down());
      this.redis = redis;
    }
  }

  mode(): 'redis' | 'memory' | 'memory-fallback' {
    if (!this.redis) return 'memory';
    return this.redis.status === 'ready' ? 'redis' : 'memory-fallback';
  }

  private limiter(points: number, duration: number, keyPrefix: string): RateLimiterAbstract {
    const memory = new RateLimiterMemory({ points, duration, keyPrefix });
    if (!this.redis) return memory;
    return new RateLimiterRedis({
      storeClient: this.redis,
      points,
      duration,
      keyPrefix,
      rejectIfRedisNotReady: true,
      insuranceLimiter: memory,
    });
  }

  private rateLimiterFor(opts: RateLimitOptions): Consumer {
    const id = `${opts.perSecond}:${opts.burst}`;
    let l = this.rateLimiters.get(id);
    if (!l) {
      const w = rateWindows(opts);
      const prefix = rateKeyPrefix(this.keyPrefix, opts);
      const sustained = this.limiter(w.sustained.points, w.sustained.duration, prefix);
      l = w.burst
        ? new BurstyRateLimiter(sustained, this.limiter(w.burst.points, w.burst.duration, `${prefix}:burst`))
        : sustained;
      this.rateLimiters.set(id, l);
    }
    return l;
  }

  async consumeRate(key: string, opts: RateLimitOptions): Promise<LimitDecision> {
    const limiter = this.rateLimiterFor(opts);
    try {
      const res = await limiter.consume(key, 1);
      return { allowed: true, retryAfterMs: 0, remaining: Math.max(0, res.remainingPoints) };
    } catch (rej) {
      if (rej instanceof RateLimiterRes)
        return { allowed: false, retryAfterMs: Math.max(1, rej.msBeforeNext), remaining: 0 };
      throw rej;
    }
  }

  async acquireSlot(
    key: string,
    limit: number,
    leaseMs = DEFAULT_SLOT_LEASE_MS,
  ): Promise<(() => Promise<void>) | undefined> {
    if (!(limit >= 0) || !(leaseMs > 0)) throw new RangeError('limit must be >= 0 and leaseMs > 0');
    const id = randomUUID();
    const slotKey = slotsKey(this.keyPrefix, key);
    if (this.redis && this.mode() === 'redis') {
      try {
        const ok = await this.redis.visionAcquireSlot(slotKey, limit, Math.ceil(leaseMs), id);
        if (ok !== 1) return undefined;
        const redis = this.redis;
        return this.once(async () => {
          // A failure leaves the slot to expire with its lease.
          await redis.zrem(slotKey, id).catch(() => undefined);
        });
      } catch (err) {
        this.logger?.warn({ err }, 'Redis slot acquisition failed; using this process’s memory');
      }
    }
    if (!this.memorySlots.acquire(slotKey, limit, leaseMs, id)) return undefined;
    return this.once(async () => this.memorySlots.release(slotKey, id));
  }

  private once(fn: () => Promise<void>): () => Promise<void> {
    let done = false;
    return async () => {
      if (done) return;
      done = true;
      await fn();
    };
  }

  async check(): Promise<void | { degraded: string }> {
    if (!this.redis) return;
    const degraded = { degraded: 'Redis unreachable: limits are enforced per process in memory' };
    if (this.redis.status !== 'ready') return degraded;
    try {
      await this.redis.ping();
      return;
    } catch {
      return degraded;
    }
  }

  async close(): Promise<void> {
    if (!this.redis) return;
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis?.disconnect());
    else this.redis.disconnect();
  }
}

/** An ioredis client suited to limiting: commands fail at once instead of queueing while disconnected. */
export function createLimiterRedisClient(url: string, logger?: Logger): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  });
  logger?.debug({ redis: redactUrl(url) }, 'connecting to Redis for limits');
  return client;
}

/** Redis-backed limits (REDIS_URL) in distributed mode, in-memory limits in standalone mode. */
export function createLimiter(
  cfg: Pick<CommonConfig, 'VISION_MODE' | 'REDIS_URL'>,
  opts: { logger?: Logger; keyPrefix: string },
): Limiter {
  if (cfg.VISION_MODE === 'distributed') {
    if (!cfg.REDIS_URL) throw new ConfigError(['REDIS_URL: required in distributed mode (not set)']);
    return new FlexibleLimiter({
      redis: createLimiterRedisClient(cfg.REDIS_URL, opts.logger),
      keyPrefix: opts.keyPrefix,
      logger: opts.logger,
    });
  }
  return new FlexibleLimiter({ keyPrefix: opts.keyPrefix, logger: opts.logger });
}
