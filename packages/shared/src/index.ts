/**
 * @vision/shared: what the services have in common, one folder per concern, each with a face (its index.ts)
 * that says what it offers. This face hands on every concern's; docs/ARCHITECTURE.md ("The shared package")
 * maps them.
 */
export * from './contract';
export * from './secrets';
export * from './telemetry';
export * from './time';
export * from './config';
export * from './identity';
export * from './admission';
export * from './edge';
export * from './calls';
export * from './egress';
export * from './bus';
export * from './db';
export * from './object-store';
export * from './limiter';
export * from './idempotency';
export * from './inference';
export * from './places';
export * from './service';
