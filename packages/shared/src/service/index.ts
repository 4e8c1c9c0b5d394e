/**
 * A service process: runMain, the entry of each service's main.ts, which starts telemetry first, then the
 * service (StartOptions, RunningService) and its metrics endpoint, and drains and stops them on SIGTERM or SIGINT
 * (service.ts); and the metrics server itself, with its readiness answer (metrics-server.ts).
 */
export * from './service';
export * from './metrics-server';
