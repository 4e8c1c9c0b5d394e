/** Limiter port: rate-limiter-flexible over Redis in distributed mode, in memory in standalone mode. */

export interface LimitDecision {
  allowed: boolean;
  /** When not allowed, how long until a retry may succeed. */
  retryAfterMs: number;
  remaining: number;
}

export interface RateLimitOptions {
  /** Sustained requests per second. */
  perSecond: number;
  /** Extra requests allowed in a burst on top of the sustained rate. */
  burst: number;
}

export interface Limiter {
  /** Token-bucket style QPS limit for `key`, with the given (per key) limits. */
  consumeRate(key: string, opts: RateLimitOptions): Promise<LimitDecision>;
  /**
   * Takes one of `limit` concurrent slots for `key`. Returns a release function, or undefined when all
   * slots are in use. Slots of a crashed holder expire after `leaseMs`.
   */
  acquireSlot(key: string, limit: number, leaseMs?: number): Promise<(() => Promise<void>) | undefined>;
  /** 'redis', 'memory', or 'memory-fallback' while Redis is unreachable. */
  mode(): 'redis' | 'memory' | 'memory-fallback';
  check(): Promise<void | { degraded: string }>;
  close(): Promise<void>;
}
