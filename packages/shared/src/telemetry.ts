import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { KafkaJsInstrumentation } from '@opentelemetry/instrumentation-kafkajs';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { redactText } from './redact';

export interface TelemetryHandle {
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry for one process: HTTP (incoming and outgoing, with W3C traceparent), fetch
 * (undici), express, pg and kafkajs instrumentation. Spans are exported over OTLP/HTTP only when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise context still propagates but nothing is exported.
 * URLs recorded on spans have user information and secret query parameters redacted.
 */
export function startTelemetry(
  serviceName: string,
  env: Record<string, string | undefined> = process.env,
  /** Extra span processors (tests read spans through an in-memory exporter). */
  spanProcessors: SpanProcessor[] = [],
): TelemetryHandle {
  const exporting = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (!exporting) {
    // Without an endpoint the SDK would still default to OTLP on localhost:4318 (and hold shutdown
    // trying to flush there): export nothing unless an exporter is chosen explicitly.
    for (const v of ['OTEL_TRACES_EXPORTER', 'OTEL_METRICS_EXPORTER', 'OTEL_LOGS_EXPORTER'])
      process.env[v] ??= 'none';
  }
  // Outgoing fetches may carry stream credentials or tokens (the stream guard's redirect checks):
  // overwrite every URL attribute the instrumentation records with its redacted form.
  const scrubUrl = (span: { setAttribute(k: string, v: string): unknown }, url: string | undefined) => {
    if (!url) return;
    const redacted = redactText(url);
    span.setAttribute('url.full', redacted);
    const q = redacted.indexOf('?');
    span.setAttribute('url.query', q >= 0 ? redacted.slice(q + 1) : '');
    span.setAttribute(
      'url.path',
      (q >= 0 ? redacted.slice(0, q) : redacted).replace(/^[a-z]+:\/\/[^/]*/i, ''),
    );
  };
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
    ...(spanProcessors.length
      ? {
          spanProcessors: [
            ...(exporting ? [new BatchSpanProcessor(new OTLPTraceExporter())] : []),
            ...spanProcessors,
          ],
        }
      : { traceExporter: exporting ? new OTLPTraceExporter() : undefined }),
    instrumentations: [
      new HttpInstrumentation({
        // Never record the Authorization header or the identity header.
        headersToSpanAttributes: { client: { requestHeaders: [] }, server: { requestHeaders: [] } },
        ignoreIncomingRequestHook: (req) => req.url === '/healthz' || req.url === '/readyz',
      }),
      new UndiciInstrumentation({
        requestHook: (span, req) => scrubUrl(span, `${req.origin}${req.path}`),
      }),
      new ExpressInstrumentation(),
      new PgInstrumentation({ enhancedDatabaseReporting: false }),
      new KafkaJsInstrumentation(),
    ],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
