/**
 * A service process: createService and runMain, which assemble config, logger, telemetry, the HTTP edge, the
 * metrics server and draining into one lifecycle (service.ts), and the metrics server itself, with its
 * readiness answer (metrics-server.ts).
 */
export * from './service';
export * from './metrics-server';
