/**
 * Rate limits: the limiter port (port.ts) and its adapter over rate-limiter-flexible, in memory or in Redis
 * (limiter.ts).
 */
export * from './port';
export * from './limiter';
