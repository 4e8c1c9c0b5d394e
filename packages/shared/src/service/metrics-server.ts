import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ReadinessReport } from '../edge/http';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { collectProcessMetrics, metricsRegistry } from '../telemetry/metrics';

/** A registry's metrics as `getMetricsAsJSON()` gives them: what another thread sends of its own. */
export type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/** This thread's metrics, merged with those other threads report (their series carry their own `service`). */
async function collect(threads: (() => Promise<MetricsJson>) | undefined): Promise<string> {
  if (!threads) return metricsRegistry.metrics();
  const merged = AggregatorRegistry.aggregate([await metricsRegistry.getMetricsAsJSON(), await threads()]);
  return merged.metrics();
}

export interface MetricsServer {
  port: number;
  /** e.g. http://127.0.0.1:9464/metrics */
  url: string;
  close(): Promise<void>;
}

/** Default port of the metrics endpoint (METRICS_PORT), the OpenTelemetry Prometheus exporter's. */
export const DEFAULT_METRICS_PORT = 9464;

/**
 * Serves the process's metrics in the Prometheus text format at GET /metrics on its own port (never
 * through the public gateway). Port 0 picks a free one. With `readiness`, GET /readyz there answers
 * the full report (each dependency and its error): the internal view of a service whose public
 * /readyz says only up or down.
 */
export function startMetricsServer(
  port: number,
  host: string,
  opts: {
    readiness?: () => Promise<ReadinessReport>;
    /** The metrics of the process's other threads (the standalone gateway's), served beside this one's. */
    threads?: () => Promise<MetricsJson>;
  } = {},
): Promise<MetricsServer> {
  collectProcessMetrics();
  const { readiness, threads } = opts;
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/readyz' && readiness) {
      readiness().then(
        ({ ready, body }) =>
          res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
        () => res.writeHead(500, { 'content-type': 'text/plain' }).end('readiness check failed\n'),
      );
      return;
    }
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    collect(threads).then(
      (text) => res.writeHead(200, { 'content-type': metricsRegistry.contentType }).end(text),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics collection failed\n'),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const bound = (server.address() as AddressInfo).port;
      const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
      resolve({
        port: bound,
        url: `http://${shown.includes(':') ? `[${shown}]` : shown}:${bound}/metrics`,
        close: () =>
          new Promise<void>((r) => {
            server.close(() => r());
            server.closeAllConnections();
          }),
      });
    });
  });
}
