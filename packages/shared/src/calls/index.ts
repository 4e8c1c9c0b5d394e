/**
 * Calls from one service to another: the one client with deadline, identity, tracing and metrics
 * (service-client.ts), and the breaker around a backend, its policy (breaker-policy.ts, used by its owner
 * through the path) and its telemetry (breaker-telemetry.ts).
 */
export * from './service-client';
export * from './breaker-telemetry';
