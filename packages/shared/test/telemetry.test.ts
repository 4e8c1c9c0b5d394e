import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { startTelemetry, type TelemetryHandle } from '../src/telemetry/telemetry';
import { runInService } from '../src/telemetry/service-context';
import { InProcessBus } from '../src/bus/in-process-bus';
import { createLogger } from '../src/telemetry/logger';
import { metricsRegistry } from '../src/telemetry/metrics';
import { Periodic } from '../src/time/periodic';

describe('telemetry', () => {
  let exporter: InMemorySpanExporter;
  let handle: TelemetryHandle;
  beforeAll(() => {
    exporter = new InMemorySpanExporter();
    handle = startTelemetry('telemetry-test', {}, [new SimpleSpanProcessor({ exporter })]);
  });
  afterAll(() => handle.shutdown());
  beforeEach(() => exporter.reset());

  const serviceOf = (s: { resource: { attributes: Record<string, unknown> } }) =>
    s.resource.attributes['service.name'];

  it('records outgoing fetches with secret query parameters redacted', async () => {
    const server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (server.address() as AddressInfo).port;
      await (await fetch(`http://127.0.0.1:${port}/live.m3u8?token=s3cr3t-value&x=1`)).text();
      await new Promise((r) => setTimeout(r, 100));
      const spans = exporter.getFinishedSpans();
      const client = spans.find((s) => String(s.attributes['url.full'] ?? '').includes('/live.m3u8'));
      expect(client).toBeDefined();
      expect(serviceOf(client!)).toBe('telemetry-test');
      const text = JSON.stringify(spans.map((s) => s.attributes));
      expect(text).not.toContain('s3cr3t-value');
      expect(text).toContain('token=***');
    } finally {
      server.close();
    }
  });

  it('gives each span the service whose code started it (one provider per service)', async () => {
    const tracer = trace.getTracer('t');
    runInService('tasks', () => tracer.startSpan('in tasks').end());
    await runInService('quota', async () => {
      await new Promise((r) => setTimeout(r, 5));
      tracer.startSpan('in quota, later').end();
    });
    tracer.startSpan('outside').end();
    const by = Object.fromEntries(exporter.getFinishedSpans().map((s) => [s.name, serviceOf(s)]));
    expect(by).toEqual({ 'in tasks': 'tasks', 'in quota, later': 'quota', outside: 'telemetry-test' });
  });

  it('ties bus consumers to producers: send/process spans, context in headers, the subscriber service', async () => {
    const bus = new InProcessBus();
    const got: Array<Record<string, string>> = [];
    let lagWhileHandling = '';
    let logged = '';
    const lines = new Writable({
      write(chunk: Buffer, _e, cb) {
        logged += chunk.toString();
        cb();
      },
    });
    const log = createLogger('results', { destination: lines });
    await runInService('results', () =>
      bus.subscribe({
        topic: 'vision.frames',
        group: 'results',
        fromBeginning: true,
        handleBatch: async (msgs) => {
          lagWhileHandling = await metricsRegistry.getSingleMetricAsString(
            'vision_bus_consumer_lag_messages',
          );
          got.push(...msgs.map((m) => m.headers));
          log.info('ingested');
        },
      }),
    );
    const tracer = trace.getTracer('t');
    let traceId = '';
    await runInService('inference', () =>
      tracer.startActiveSpan('job', async (job) => {
        traceId = job.spanContext().traceId;
        await bus.publish('vision.frames', [{ key: 'task-1', value: { n: 1 } }]);
        job.end();
      }),
    );
    for (let i = 0; i < 100 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    await bus.close();
    const spans = exporter.getFinishedSpans();
    const send = spans.find((s) => s.name === 'send vision.frames')!;
    const processSpan = spans.find((s) => s.name === 'process vision.frames')!;
    expect(send.kind).toBe(SpanKind.PRODUCER);
    expect(serviceOf(send)).toBe('inference');
    expect(send.spanContext().traceId).toBe(traceId);
    expect(got[0].traceparent).toContain(send.spanContext().spanId);
    expect(processSpan.kind).toBe(SpanKind.CONSUMER);
    expect(serviceOf(processSpan)).toBe('results');
    expect(processSpan.spanContext().traceId).toBe(traceId);
    expect(processSpan.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
    expect(processSpan.links.map((l) => l.context.spanId)).toEqual([send.spanContext().spanId]);
    expect(processSpan.attributes['messaging.destination.name']).toBe('vision.frames');
    expect(processSpan.attributes['messaging.consumer.group.name']).toBe('results');
    // The log line written while handling carries the consumer span's ids.
    const line = JSON.parse(logged.trim().split('\n')[0]) as Record<string, string>;
    expect(line.trace_id).toBe(traceId);
    expect(line.span_id).toBe(processSpan.spanContext().spanId);
    const text = await metricsRegistry.metrics();
    expect(text).toMatch(
      /vision_bus_messages_published_total\{service="inference",topic="vision.frames"\} 1/,
    );
    expect(text).toMatch(
      /vision_bus_messages_consumed_total\{service="results",topic="vision.frames",group="results"\} 1/,
    );
    // The group's lag on the partition: the message being handled counts until it is handled.
    const lag =
      /vision_bus_consumer_lag_messages\{service="results",topic="vision.frames",group="results",partition="\d+"\} (\d+)/;
    expect([lagWhileHandling.match(lag)?.[1], text.match(lag)?.[1]]).toEqual(['1', '0']);
  });

  it("runs each background run in a root span named after the worker: its log lines carry the span's ids", async () => {
    let logged = '';
    const lines = new Writable({
      write(chunk: Buffer, _e, cb) {
        logged += chunk.toString();
        cb();
      },
    });
    const log = createLogger('quota', { destination: lines });
    let runs = 0;
    const loop = runInService('quota', () => {
      const p = new Periodic(
        'quota sweeper',
        60_000,
        async () => {
          runs++;
          log.info('swept');
          if (runs === 2) throw new Error('sweep failed for rtsp://user:pw@cam.example/1');
        },
        log,
      );
      p.start(0);
      return p;
    });
    for (let i = 0; i < 100 && runs === 0; i++) await new Promise((r) => setTimeout(r, 10));
    // A run kicked from inside a request's span is linked to it, not its child.
    const tracer = trace.getTracer('t');
    let requestSpanId = '';
    await tracer.startActiveSpan('request', async (req) => {
      requestSpanId = req.spanContext().spanId;
      await loop.kick();
      req.end();
    });
    await loop.stop();
    const runSpans = exporter.getFinishedSpans().filter((s) => s.name === 'quota sweeper');
    expect(runSpans).toHaveLength(2);
    expect(runSpans.map(serviceOf)).toEqual(['quota', 'quota']);
    expect(runSpans.map((s) => s.parentSpanContext)).toEqual([undefined, undefined]);
    expect(runSpans[1].links.map((l) => l.context.spanId)).toEqual([requestSpanId]);
    expect(runSpans[1].status.code).toBe(2);
    expect(JSON.stringify(runSpans[1].events)).not.toContain('pw@');
    const logs = logged
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, string>);
    expect(logs.map((l) => [l.msg, l.trace_id, l.span_id])).toEqual([
      ['swept', runSpans[0].spanContext().traceId, runSpans[0].spanContext().spanId],
      ['swept', runSpans[1].spanContext().traceId, runSpans[1].spanContext().spanId],
      [
        'background work failed; will retry',
        runSpans[1].spanContext().traceId,
        runSpans[1].spanContext().spanId,
      ],
    ]);
  });
});
