import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { redactText } from '../secrets/redact';
import { setProcessService } from './service-context';
import { ServiceRoutingTracerProvider } from './trace-routing';

export interface TelemetryHandle {
  shutdown(): Promise<void>;
}

/** Paths that are not traced: probes and the metrics endpoint. */
const UNTRACED = new Set(['/healthz', '/readyz', '/metrics']);

/** The request id travels in X-Request-Id; it is recorded on server and client spans (never other headers). */
const CAPTURED_HEADERS = ['x-request-id'];

/**
 * The instrumentations patch a module through a require hook, on the first `require` after they are
 * registered. Modules this package loads itself (`node:http` for its servers, express, pg) are already
 * in the cache by the time telemetry starts, and nothing may require them again (the servers are created
 * from those first imports): without a require now, no server span would ever be made. The patches change
 * the shared exports and prototypes in place, so the earlier imports are traced too.
 */
function patchLoadedModules(): void {
  for (const name of ['http', 'https', 'express', 'pg']) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require(name);
    } catch {
      // Not installed in this process: nothing to patch.
    }
  }
}

/**
 * Starts OpenTelemetry for one process: W3C trace context and baggage, HTTP (incoming and outgoing),
 * undici (`fetch`, and `request` of calls between services), express (route names only: server spans
 * named `METHOD /route`) and pg instrumentation.
 * Every span belongs to the service of the code that started it (service-context.ts): `serviceName`
 * in a distributed process, each of the six in the standalone one. Spans are exported over OTLP/HTTP
 * only when OTEL_EXPORTER_OTLP_ENDPOINT is set (and OTEL_TRACES_EXPORTER is not `none`); otherwise
 * context still propagates but nothing is exported. URLs recorded on spans have user information and
 * secret query parameters redacted. Bus messages are traced by the bus adapters (bus-tracing.ts).
 */
export function startTelemetry(
  serviceName: string,
  env: Record<string, string | undefined> = process.env,
  /** Extra span processors (tests read spans through an in-memory exporter). */
  spanProcessors: SpanProcessor[] = [],
): TelemetryHandle {
  setProcessService(serviceName);
  const exporting = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT) && env.OTEL_TRACES_EXPORTER !== 'none';
  const processors = [
    ...(exporting ? [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })] : []),
    ...spanProcessors,
  ];
  const provider = new ServiceRoutingTracerProvider(processors, {
    'service.namespace': 'vision',
    'deployment.mode': env.VISION_MODE ?? 'distributed',
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(
    new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
  );
  trace.setGlobalTracerProvider(provider);

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
  const unload = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        // Only the request id is recorded, never the Authorization or identity headers.
        headersToSpanAttributes: {
          client: { requestHeaders: CAPTURED_HEADERS, responseHeaders: [] },
          server: { requestHeaders: CAPTURED_HEADERS, responseHeaders: CAPTURED_HEADERS },
        },
        // The query of a request a server received is recorded under the same rule as every other URL
        // (redact.ts), not only under the instrumentation's short list of parameter names.
        requestHook: (span, req) => {
          const target = 'url' in req && typeof req.url === 'string' ? req.url : '';
          const q = target.indexOf('?');
          if (q >= 0) span.setAttribute('url.query', redactText(target.slice(q)).slice(1));
        },
        // A proxy request (absolute-form target: ffmpeg through the egress proxy, egress-proxy.ts) names a
        // caller's stream URL: it is not traced, and what it sends on runs with tracing suppressed.
        ignoreIncomingRequestHook: (req) =>
          !(req.url ?? '').startsWith('/') || UNTRACED.has((req.url ?? '').split('?')[0]),
      }),
      new UndiciInstrumentation({
        requestHook: (span, req) => scrubUrl(span, `${req.origin}${req.path}`),
        headersToSpanAttributes: { requestHeaders: CAPTURED_HEADERS, responseHeaders: [] },
      }),
      // Express only names the route (the server span becomes `POST /v1/vision/tasks`); its layers
      // would each add a span (`middleware - <anonymous>`, `request handler`) that says nothing more.
      new ExpressInstrumentation({
        ignoreLayersType: [
          ExpressLayerType.MIDDLEWARE,
          ExpressLayerType.ROUTER,
          ExpressLayerType.REQUEST_HANDLER,
        ],
      }),
      new PgInstrumentation({ enhancedDatabaseReporting: false }),
    ],
  });
  patchLoadedModules();
  return {
    shutdown: async () => {
      unload();
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
