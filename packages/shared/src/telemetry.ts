import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { KafkaJsInstrumentation } from '@opentelemetry/instrumentation-kafkajs';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
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
export function startTelemetry(serviceName: string, env = process.env): TelemetryHandle {
  const exporting = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const scrubUrl = (span: { setAttribute(k: string, v: string): unknown }, url: string | undefined) => {
    if (url) span.setAttribute('url.full', redactText(url));
  };
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
    traceExporter: exporting ? new OTLPTraceExporter() : undefined,
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
