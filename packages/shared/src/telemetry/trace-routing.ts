import {
  context,
  type Context,
  type Span,
  type SpanOptions,
  type Tracer,
  type TracerOptions,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { TracerProvider as SdkTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { currentService } from './service-context';

/**
 * The global tracer provider: one SDK tracer provider per service (each with its own resource, so
 * Jaeger shows the service of every span), chosen when a span starts by the service the code belongs
 * to (currentService()). In a distributed process that is always the process's service; in the
 * standalone process it is the service whose start() scheduled the work. All providers share the
 * span processors (one exporter; spans carry their own resource).
 */
export class ServiceRoutingTracerProvider implements TracerProvider {
  private readonly providers = new Map<string, SdkTracerProvider>();

  constructor(
    private readonly processors: SpanProcessor[],
    private readonly resourceAttributes: Record<string, string> = {},
  ) {}

  providerFor(service: string): SdkTracerProvider {
    let p = this.providers.get(service);
    if (!p) {
      p = new SdkTracerProvider({
        resource: resourceFromAttributes({ ...this.resourceAttributes, [ATTR_SERVICE_NAME]: service }),
        spanProcessors: this.processors,
      });
      this.providers.set(service, p);
    }
    return p;
  }

  getTracer(name: string, version?: string, options?: TracerOptions): Tracer {
    return new RoutingTracer((service) => this.providerFor(service).getTracer(name, version, options));
  }

  async forceFlush(): Promise<void> {
    await Promise.all(this.processors.map((p) => p.forceFlush()));
  }

  /** Flushes and stops the shared processors once (the per-service providers hold no other state). */
  async shutdown(): Promise<void> {
    await Promise.all(this.processors.map((p) => p.shutdown()));
  }
}

class RoutingTracer implements Tracer {
  constructor(private readonly tracerFor: (service: string) => Tracer) {}

  startSpan(name: string, options?: SpanOptions, ctx?: Context): Span {
    return this.tracerFor(currentService()).startSpan(name, options, ctx);
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, opts: SpanOptions, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    opts: SpanOptions,
    ctx: Context,
    fn: F,
  ): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    a: SpanOptions | F,
    b?: Context | F,
    c?: F,
  ): ReturnType<F> {
    const opts = typeof a === 'function' ? undefined : a;
    const parent = typeof b === 'object' ? b : context.active();
    const fn = (typeof a === 'function' ? a : typeof b === 'function' ? b : c) as F;
    const span = this.startSpan(name, opts, parent);
    return context.with(trace.setSpan(parent, span), () => fn(span)) as ReturnType<F>;
  }
}
