/**
 * Calls from one service to another: the one client with deadline, identity, tracing and metrics
 * (service-client.ts), answered in process where the service called runs in this process too
 * (local-calls.ts), and the breaker around a backend: when it opens (breaker-policy.ts, which inference's
 * breaker imports by its path) and what it reports (breaker-telemetry.ts).
 */
export * from './service-client';
export * from './local-calls';
export * from './breaker-telemetry';
