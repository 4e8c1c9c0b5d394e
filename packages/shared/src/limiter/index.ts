/**
 * Rate limits: the limiter port (port.ts) and its adapter over rate-limiter-flexible, in memory or in Redis
 * (limiter.ts), which names its Redis keys with keys.ts.
 */
export * from './port';
export * from './keys';
export * from './limiter';
