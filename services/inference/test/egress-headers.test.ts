/**
 * A live job's (re)connect sends a caller-named host no trace context or baggage, even inside a
 * traced job with baggage, and does not pass a connection error's text on.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { startTelemetry, type TelemetryHandle } from '@vision/shared';
import { resolveRedirects } from '../src/net/redirects';

let telemetry: TelemetryHandle;
let server: http.Server;
let base = '';
const seen: http.IncomingHttpHeaders[] = [];
beforeAll(async () => {
  telemetry = startTelemetry('inference', {}, [
    new SimpleSpanProcessor({ exporter: new InMemorySpanExporter() }),
  ]);
  server = http.createServer((req, res) => {
    seen.push(req.headers);
    if (req.url === '/a') return void res.writeHead(302, { location: '/live.m3u8' }).end();
    res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' }).end('#EXTM3U\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await telemetry.shutdown();
});

const traced = <T>(fn: () => Promise<T>): Promise<T> => {
  const bag = propagation.createBaggage({ 'vision.subject': { value: 'acme' } });
  return trace
    .getTracer('test')
    .startActiveSpan('live job', (span) =>
      context.with(propagation.setBaggage(context.active(), bag), () => fn().finally(() => span.end())),
    );
};

test('every hop of the redirect walk goes without trace context or baggage', async () => {
  seen.length = 0;
  const r = await traced(() => resolveRedirects(`${base}/a`, { allowPrivate: true }));
  expect(r).toMatchObject({ ok: true, url: `${base}/live.m3u8`, playlist: '#EXTM3U\n' });
  expect(seen).toHaveLength(2);
  for (const headers of seen) {
    expect(headers.traceparent).toBeUndefined();
    expect(headers.tracestate).toBeUndefined();
    expect(headers.baggage).toBeUndefined();
  }
});

test('a connection error is reported without its text', async () => {
  const r = await traced(() => resolveRedirects('http://127.0.0.1:1/x', { allowPrivate: true }));
  expect(r).toEqual({ ok: false, refused: false, reason: 'stream unreachable' });
});
