/**
 * What a service tells about itself: the logger (logger.ts), traces and their export (telemetry.ts, with the
 * per-service tracer routing of trace-routing.ts), Prometheus metrics (metrics.ts) and the HTTP middleware that
 * feeds them (http-metrics.ts), all labelled with the service the running code belongs to (service-context.ts).
 */
export * from './logger';
export * from './telemetry';
export * from './service-context';
export * from './metrics';
export * from './http-metrics';
