import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import pino, { type Logger } from 'pino';
import { redactText } from '../secrets/redact';

export type { Logger };

/** Paths that are always censored, wherever a log line carries them. */
export const REDACT_PATHS = [
  'authorization',
  'Authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers["x-vision-identity"]',
  'headers["x-vision-identity"]',
  'apiKey',
  'api_key',
  'key',
  '*.apiKey',
  '*.api_key',
  'password',
  '*.password',
  'secret',
  '*.secret',
];

function scrub(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return value;
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrub(v, depth + 1);
  return out;
}

/**
 * The trace and span of the code that logs (W3C ids, as Jaeger shows them). Lines logged outside any
 * span (start-up, shutdown) carry none.
 */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const sc = trace.getSpan(context.active())?.spanContext();
  return sc && isSpanContextValid(sc) ? { trace_id: sc.traceId, span_id: sc.spanId } : {};
}

export interface LoggerOptions {
  level?: string;
  /** Where lines go; a stream in tests, stdout otherwise. */
  destination?: pino.DestinationStream;
}

/**
 * pino logger for one service: `Authorization`, keys and secrets are censored by path, and user
 * information inside any URL in any string field or message is replaced by `***`. Every line logged
 * inside a span carries its `trace_id` and `span_id`.
 */
export function createLogger(service: string, opts: LoggerOptions = {}): Logger {
  return pino(
    {
      name: service,
      level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
      base: { service },
      mixin: traceFields,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { log: (obj) => scrub(obj) as Record<string, unknown> },
      hooks: {
        logMethod(args, method) {
          const scrubbed = args.map((a) => scrub(a)) as Parameters<typeof method>;
          return method.apply(this, scrubbed);
        },
      },
      // Error messages and stacks can carry URLs with credentials: scrub the serialised error too.
      serializers: { err: (e: Error) => scrub(pino.stdSerializers.err(e)) },
    },
    opts.destination,
  );
}
