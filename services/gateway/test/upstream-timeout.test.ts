/**
 * An upstream that does not answer within the gateway's timeout: the client gets 503, the timeout is
 * counted in vision_upstream_timeouts_total and recorded on the request's span (error.type=timeout,
 * timeout_ms, a `timeout` event), so the 503 is explained by its trace.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import express from 'express';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { createLogger, metricsRegistry, startTelemetry, type TelemetryHandle } from '@vision/shared';
import { createForwarder } from '../src/http/proxy';

const listen = (server: http.Server) =>
  new Promise<string>((r) =>
    server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );

describe('gateway upstream timeout', () => {
  let exporter: InMemorySpanExporter;
  let telemetry: TelemetryHandle;
  const servers: http.Server[] = [];
  beforeAll(() => {
    exporter = new InMemorySpanExporter();
    telemetry = startTelemetry('gateway', {}, [new SimpleSpanProcessor({ exporter })]);
  });
  afterAll(async () => {
    for (const s of servers) s.closeAllConnections();
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    await telemetry.shutdown();
  });

  it('answers 503, counts the timeout and records it on the span of the request', async () => {
    // The upstream reads the request and never answers.
    const silent = http.createServer((req) => req.resume());
    servers.push(silent);
    const upstream = await listen(silent);
    const forward = createForwarder(createLogger('gateway', { level: 'silent' }), {
      timeoutMs: 300,
      pooledSockets: 4,
      uploadIdleMs: 5000,
      streamStallMs: 30_000,
    });
    const tracer = trace.getTracer('test');
    // The gateway's handler answers errors with the envelope (an express response).
    const app = express();
    app.use((req, res) =>
      tracer.startActiveSpan('POST /v1/vision/tasks', (span) => {
        res.once('close', () => span.end());
        forward(req, res, { url: upstream, name: 'tasks' }, 1024);
      }),
    );
    const front = http.createServer(app);
    servers.push(front);
    const url = await listen(front);
    const count = async () =>
      Number(
        /vision_upstream_timeouts_total\{service="gateway",upstream="tasks"\} (\d+)/.exec(
          await metricsRegistry.metrics(),
        )?.[1] ?? 0,
      );
    const before = await count();

    const res = await fetch(`${url}/v1/vision/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('OP-SYS-UNAVAILABLE');
    await new Promise((r) => setTimeout(r, 50));
    const span = exporter.getFinishedSpans().find((s) => s.name === 'POST /v1/vision/tasks');
    expect(span?.attributes).toMatchObject({ 'error.type': 'timeout', timeout_ms: 300 });
    expect(span?.events.map((e) => [e.name, e.attributes?.['peer.service']])).toEqual([['timeout', 'tasks']]);
    expect(await count()).toBe(before + 1);
    forward.close();
  });
});
