import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  isSpanContextValid,
  propagation,
  trace,
  type Context,
  type Link,
  type SpanContext,
} from '@opentelemetry/api';
import type { IncomingMessage, OutgoingMessage, SubscribeOptions } from './port';
import { metrics } from '../telemetry/metrics';
import { currentService, runInService } from '../telemetry/service-context';

/**
 * Tracing and metrics of the message bus, shared by the Kafka and in-process adapters, following the
 * OpenTelemetry messaging conventions: a `send <topic>` PRODUCER span per publish, whose W3C context
 * travels in each message's headers (`traceparent`, `tracestate`), and a `process <topic>` CONSUMER
 * span per delivered batch, linked to the context of every message in it and child of the first
 * one's (so a video task's frames and their ingest sit in the task's trace).
 *
 * A message that already carries a traceparent (an outbox row keeps the one of the request that
 * wrote it) is sent under that context, so the consumer joins the writer's trace.
 */
const tracer = () => trace.getTracer('vision-bus');

export type BusSystem = 'kafka' | 'memory';

/** Messaging system names: Kafka's own, and ours for the in-process bus. */
const SYSTEM_NAME: Record<BusSystem, string> = { kafka: 'kafka', memory: 'vision_in_process' };

function contextOf(headers: Record<string, string> | undefined): Context | undefined {
  if (!headers?.traceparent) return undefined;
  const ctx = propagation.extract(ROOT_CONTEXT, headers);
  const sc = trace.getSpanContext(ctx);
  return sc && isSpanContextValid(sc) ? ctx : undefined;
}

/** The context to store beside a message written now and sent later (an outbox row). */
export function traceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/**
 * Publishes `messages` with `send`, inside one producer span per distinct parent context (usually
 * one); each message's headers get the producer span's context.
 */
export async function tracedPublish(
  system: BusSystem,
  topic: string,
  messages: OutgoingMessage[],
  send: (messages: OutgoingMessage[]) => Promise<void>,
): Promise<void> {
  const groups = new Map<string, { parent: Context; items: OutgoingMessage[] }>();
  for (const m of messages) {
    const carried = contextOf(m.headers);
    const key = carried ? (m.headers?.traceparent ?? '') : '';
    const g = groups.get(key) ?? { parent: carried ?? context.active(), items: [] };
    g.items.push(m);
    groups.set(key, g);
  }
  const out: OutgoingMessage[] = [];
  const spans = [...groups.values()].map(({ parent, items }) => {
    const span = tracer().startSpan(
      `send ${topic}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          'messaging.system': SYSTEM_NAME[system],
          'messaging.operation.type': 'send',
          'messaging.operation.name': 'send',
          'messaging.destination.name': topic,
          'messaging.batch.message_count': items.length,
          ...(items.length === 1 ? { 'messaging.kafka.message.key': items[0].key } : {}),
        },
      },
      parent,
    );
    const headers: Record<string, string> = {};
    propagation.inject(trace.setSpan(parent, span), headers);
    for (const m of items) out.push({ ...m, headers: { ...m.headers, ...headers } });
    return span;
  });
  try {
    await send(out);
    metrics.busPublished.inc({ topic }, messages.length);
  } catch (err) {
    for (const s of spans) {
      s.recordException(err as Error);
      s.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      s.setAttribute('error.type', (err as Error).name || 'Error');
    }
    throw err;
  } finally {
    for (const s of spans) s.end();
  }
}

/** A subscription's handler as the adapters call it: the batch, and how many messages remain behind it. */
export type TracedHandler = (messages: IncomingMessage[], lagAfter?: number) => Promise<void>;

/**
 * Wraps a subscription's handler: each batch runs in the subscribing service (captured now) under a
 * `process <topic>` consumer span; handled messages are counted and the group's lag on the partition
 * recorded (vision_bus_consumer_lag_messages).
 */
export function tracedHandler(system: BusSystem, opts: SubscribeOptions): TracedHandler {
  const service = currentService();
  return (messages, lagAfter) =>
    runInService(service, async () => {
      const first = messages[0];
      const lag = (n: number) =>
        first &&
        metrics.consumerLag.set(
          { topic: opts.topic, group: opts.group, partition: String(first.partition) },
          Math.max(0, n),
        );
      if (lagAfter !== undefined) lag(lagAfter + messages.length);
      const links: Link[] = [];
      const seen = new Set<string>();
      let parent: Context | undefined;
      for (const m of messages) {
        const ctx = contextOf(m.headers);
        const sc: SpanContext | undefined = ctx && trace.getSpanContext(ctx);
        if (!ctx || !sc || seen.has(sc.spanId)) continue;
        seen.add(sc.spanId);
        parent ??= ctx;
        links.push({ context: sc });
      }
      return tracer().startActiveSpan(
        `process ${opts.topic}`,
        {
          kind: SpanKind.CONSUMER,
          links,
          attributes: {
            'messaging.system': SYSTEM_NAME[system],
            'messaging.operation.type': 'process',
            'messaging.operation.name': 'process',
            'messaging.destination.name': opts.topic,
            'messaging.consumer.group.name': opts.group,
            'messaging.batch.message_count': messages.length,
            ...(first
              ? {
                  'messaging.destination.partition.id': String(first.partition),
                  'messaging.kafka.offset': Number(first.offset),
                }
              : {}),
          },
        },
        parent ?? ROOT_CONTEXT,
        async (span) => {
          try {
            await opts.handleBatch(messages);
            metrics.busConsumed.inc({ topic: opts.topic, group: opts.group }, messages.length);
            if (lagAfter !== undefined) lag(lagAfter);
          } catch (err) {
            span.recordException(err as Error);
            span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
            span.setAttribute('error.type', (err as Error).name || 'Error');
            throw err;
          } finally {
            span.end();
          }
        },
      );
    });
}
