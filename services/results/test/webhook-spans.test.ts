/**
 * Each webhook delivery attempt is a CLIENT span of its own trace, linked to the trace of the event it
 * delivers (the context the event carried on the bus), with the attempt number and its outcome.
 */
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { startTelemetry, type TelemetryHandle } from '@vision/shared';
import { Receiver } from './webhook-receiver';
import { startWebhookHarness, waitFor, type WebhookHarness } from './webhook-harness';

let exporter: InMemorySpanExporter;
let telemetry: TelemetryHandle;
let h: WebhookHarness;
let rx: Receiver;

beforeAll(async () => {
  exporter = new InMemorySpanExporter();
  telemetry = startTelemetry('results', {}, [new SimpleSpanProcessor({ exporter })]);
  h = await startWebhookHarness();
  rx = await new Receiver().start();
  const r = await h.api('POST', '/v1/vision/webhooks', {
    body: { url: rx.url, event_types: ['vision.task.status_changed'] },
  });
  expect(r.status).toBe(201);
  rx.secrets = [r.body.secret as string];
});
afterAll(async () => {
  await h?.close();
  await rx?.close();
  await telemetry?.shutdown();
});

const attemptSpans = (deliveryId: string): ReadableSpan[] =>
  exporter
    .getFinishedSpans()
    .filter((s) => s.name === 'webhook attempt' && s.attributes['vision.webhook.delivery_id'] === deliveryId)
    .sort(
      (a, b) =>
        Number(a.attributes['vision.webhook.attempt']) - Number(b.attributes['vision.webhook.attempt']),
    );

describe('webhook attempt spans', () => {
  it('every attempt of a delivery is a span linked to the trace of its event', async () => {
    // The first attempt of the event is refused, the second accepted.
    let refused = 0;
    rx.answer = (r) =>
      r.event?.type === 'vision.task.status_changed' && refused++ === 0 ? { status: 503 } : { status: 204 };
    const eventId = await trace.getTracer('test').startActiveSpan('task transition', async (span) => {
      try {
        return await h.taskEvent('task-span', 'running', { type: 'task.created' });
      } finally {
        span.end();
      }
    });
    const eventTrace = exporter
      .getFinishedSpans()
      .find((s) => s.name === 'task transition')!
      .spanContext().traceId;

    await waitFor('the event delivered', async () => rx.events().some((e) => e.id === eventId), 20_000);
    await waitFor('two attempt spans', async () => attemptSpans(eventId).length === 2);
    const spans = attemptSpans(eventId);
    expect(rx.received.filter((r) => r.id === eventId)).toHaveLength(2);
    expect(spans.map((s) => s.attributes['vision.webhook.attempt'])).toEqual([1, 2]);
    expect(spans.map((s) => s.attributes['http.response.status_code'])).toEqual([503, 204]);
    expect(spans.map((s) => s.attributes['vision.webhook.outcome'])).toEqual([
      expect.not.stringMatching(/^delivered$/),
      'delivered',
    ]);
    expect(spans.map((s) => s.status.code)).toEqual([SpanStatusCode.ERROR, SpanStatusCode.UNSET]);
    for (const s of spans) {
      expect(s.kind).toBe(SpanKind.CLIENT);
      expect(s.attributes['vision.webhook.event_type']).toBe('vision.task.status_changed');
      // A trace of its own (an attempt may run a day after the event), linked to the event's.
      expect(s.parentSpanContext).toBeUndefined();
      expect(s.spanContext().traceId).not.toBe(eventTrace);
      expect(s.links.map((l) => l.context.traceId)).toEqual([eventTrace]);
    }
    // Each attempt is a span of its own.
    expect(new Set(spans.map((s) => s.spanContext().spanId)).size).toBe(2);
  }, 60_000);
});
