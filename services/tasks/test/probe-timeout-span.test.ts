/**
 * A stream that does not answer in time: the guard's request and the ffprobe run each end at their
 * timeout, and the request's span says so (error.type=timeout, timeout_ms, a `timeout` event with
 * peer.service=stream), so a stream_unreachable is explained by its trace. A caller's stream is not one
 * of our upstreams: vision_upstream_timeouts_total does not count it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { metricsRegistry, startTelemetry, type TelemetryHandle } from '@vision/shared';
import { probeStream } from '../src/probe/ffprobe';
import { guardStreamUrl } from '../src/probe/stream-guard';
import { parseStreamUrl } from '../src/domain/stream-url';

describe('stream probe timeouts on the span', () => {
  let exporter: InMemorySpanExporter;
  let telemetry: TelemetryHandle;
  let server: http.Server;
  let url = '';
  beforeAll(async () => {
    exporter = new InMemorySpanExporter();
    telemetry = startTelemetry('tasks', {}, [new SimpleSpanProcessor({ exporter })]);
    // Reads the request, never answers.
    server = http.createServer((req) => req.resume());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/live.mp4`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await telemetry.shutdown();
  });

  const inSpan = <T>(name: string, fn: () => Promise<T>) =>
    trace.getTracer('test').startActiveSpan(name, async (span) => {
      try {
        return await fn();
      } finally {
        span.end();
      }
    });
  const finished = (name: string) => exporter.getFinishedSpans().find((s) => s.name === name);
  const timeouts = async () =>
    /vision_upstream_timeouts_total\{[^}]*upstream="stream"/.test(await metricsRegistry.metrics());

  it('the guard', async () => {
    const parsed = parseStreamUrl(url);
    if (!parsed.ok) throw new Error(parsed.problem);
    const r = await inSpan('guard', () => guardStreamUrl(parsed.url, { allowPrivate: true, timeoutMs: 300 }));
    expect(r).toMatchObject({ ok: false, reason: 'stream_unreachable' });
    expect(finished('guard')?.attributes).toMatchObject({ 'error.type': 'timeout', timeout_ms: 300 });
    expect(finished('guard')?.events.map((e) => [e.name, e.attributes?.['peer.service']])).toEqual([
      ['timeout', 'stream'],
    ]);
    expect(await timeouts()).toBe(false);
  });

  it('ffprobe', async () => {
    const r = await inSpan('probe', () => probeStream(url, 'http', { timeoutMs: 1000 }));
    expect(r.ok).toBe(false);
    expect(finished('probe')?.attributes).toMatchObject({ 'error.type': 'timeout', timeout_ms: 1000 });
    expect(await timeouts()).toBe(false);
  });
});
