/**
 * The inference client's breaker and time limit, as traces and metrics show them: a call that runs
 * out of time is a `call inference` span with error.type=timeout, timeout_ms and a `timeout` event
 * (and vision_upstream_timeouts_total); calls through the breaker record `breaker.state` on the
 * caller's span; a call the open breaker refuses adds the `breaker.open` event there; the state gauge
 * and the transitions counter follow closed -> open -> half_open -> closed.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { startTelemetry, type TelemetryHandle } from '../src/telemetry/telemetry';
import { InferenceClient } from '../src/inference/inference-client';
import { ServiceClient } from '../src/calls/service-client';
import { createLogger } from '../src/telemetry/logger';
import { metricsRegistry } from '../src/telemetry/metrics';
import { runInService } from '../src/telemetry/service-context';
import { signerOf } from '../../../test/helpers/identity';

const identity = { subject: 'acme', requestId: 'req-1' };
const job = {
  job_id: 'job-1',
  scene_code: 'person_vehicle',
  source: { type: 'stream', url: 'rtsp://cam/1' },
} as const;

describe('inference breaker and timeout telemetry', () => {
  let exporter: InMemorySpanExporter;
  let telemetry: TelemetryHandle;
  let server: http.Server;
  /** How the fake inference answers: slowly, with 503, or with an accepted job. */
  let mode: 'slow' | 'down' | 'ok' = 'ok';
  let client: InferenceClient;

  beforeAll(async () => {
    exporter = new InMemorySpanExporter();
    telemetry = startTelemetry('breaker-test', {}, [new SimpleSpanProcessor({ exporter })]);
    server = http.createServer((req, res) => {
      req.resume();
      const answer = () => {
        if (mode === 'down') {
          res.writeHead(503, { 'content-type': 'application/json' }).end('{}');
          return;
        }
        res
          .writeHead(201, { 'content-type': 'application/json' })
          .end(JSON.stringify({ job: { job_id: 'job-1', scene_code: 'person_vehicle', status: 'running' } }));
      };
      if (mode === 'slow') setTimeout(answer, 600).unref();
      else answer();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = runInService(
      'tasks',
      () =>
        new InferenceClient(
          new ServiceClient('inference', url, signerOf('tasks')),
          {
            timeoutMs: 200,
            hangMs: 1000,
            errorThresholdPercentage: 50,
            resetTimeoutMs: 300,
            volumeThreshold: 2,
          },
          createLogger('tasks', { level: 'silent' }),
        ),
    );
  });
  afterAll(async () => {
    client.shutdown();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await telemetry.shutdown();
  });
  beforeEach(() => exporter.reset());

  /** Runs `fn` in a span standing for the create request; returns its result and the finished span. */
  const inRequest = async <T>(fn: () => Promise<T>): Promise<[T, ReadableSpan]> => {
    const r = await runInService('tasks', () =>
      trace.getTracer('test').startActiveSpan('POST /v1/vision/tasks', async (span) => {
        try {
          return await fn();
        } finally {
          span.end();
        }
      }),
    );
    const span = exporter.getFinishedSpans().find((s) => s.name === 'POST /v1/vision/tasks') as ReadableSpan;
    return [r, span];
  };
  const sample = async (name: string, labels: string) => {
    const line = (await metricsRegistry.metrics())
      .split('\n')
      .find((l) => l.startsWith(`${name}{`) && l.includes(labels));
    return line ? Number(line.split(' ').pop()) : undefined;
  };

  it('marks a call that runs out of time on its span and counts it', async () => {
    mode = 'slow';
    const [outcome, request] = await inRequest(() => client.submit(identity, job));
    expect(outcome.kind).toBe('unknown');
    const call = exporter.getFinishedSpans().find((s) => s.name === 'call inference') as ReadableSpan;
    expect(call.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(call.attributes).toMatchObject({
      'error.type': 'timeout',
      timeout_ms: 200,
      'peer.service': 'inference',
    });
    expect(call.events.map((e) => e.name)).toEqual(['timeout']);
    expect(request.attributes['breaker.state']).toBe('closed');
    expect(await sample('vision_upstream_timeouts_total', 'service="tasks",upstream="inference"')).toBe(1);
    expect(await sample('vision_breaker_state', 'service="tasks",upstream="inference",state="closed"')).toBe(
      1,
    );
  });

  it('records the open breaker and its refusals, then half-open and closed again', async () => {
    mode = 'down';
    // The second failure in the window opens it (volume threshold 2, the timeout above was the first).
    await inRequest(() => client.submit(identity, job));
    expect(client.state()).toBe('open');
    expect(await sample('vision_breaker_state', 'service="tasks",upstream="inference",state="open"')).toBe(1);
    exporter.reset();
    const [refused, request] = await inRequest(() => client.submit(identity, job));
    expect(refused).toEqual({ kind: 'not_delivered', breakerOpen: true });
    expect(request.attributes['breaker.state']).toBe('open');
    expect(request.events.map((e) => [e.name, e.attributes?.['peer.service']])).toEqual([
      ['breaker.open', 'inference'],
    ]);
    // Refused before any call: no `call inference` span.
    expect(exporter.getFinishedSpans().filter((s) => s.name === 'call inference')).toEqual([]);

    mode = 'ok';
    await new Promise((r) => setTimeout(r, 400));
    expect(client.state()).toBe('half_open');
    expect(
      await sample('vision_breaker_state', 'service="tasks",upstream="inference",state="half_open"'),
    ).toBe(1);
    const [accepted] = await inRequest(() => client.submit(identity, job));
    expect(accepted.kind).toBe('accepted');
    expect(client.state()).toBe('closed');
    expect(await sample('vision_breaker_state', 'service="tasks",upstream="inference",state="closed"')).toBe(
      1,
    );
    for (const state of ['open', 'half_open', 'closed'])
      expect([
        state,
        await sample('vision_breaker_transitions_total', `upstream="inference",state="${state}"`),
      ]).toEqual([state, 1]);
  });
});
