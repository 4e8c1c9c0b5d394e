/**
 * What a caller-named host gets from us, and what the caller gets back: the probe's request carries
 * no trace context or baggage (even inside a traced request with baggage), and an error status from
 * the stream's host is not reflected to the caller.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { startTelemetry, type TelemetryHandle } from '@vision/shared';
import { guardStreamUrl } from '../src/probe/stream-guard';
import { parseStreamUrl } from '../src/domain/stream-url';

let telemetry: TelemetryHandle;
let server: http.Server;
let base = '';
const seen: http.IncomingHttpHeaders[] = [];
beforeAll(async () => {
  telemetry = startTelemetry('tasks', {}, [
    new SimpleSpanProcessor({ exporter: new InMemorySpanExporter() }),
  ]);
  server = http.createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(req.url === '/admin' ? 404 : 401).end('internal detail');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await telemetry.shutdown();
});

const guarded = (path: string) => {
  const parsed = parseStreamUrl(`${base}${path}`);
  if (!parsed.ok) throw new Error(parsed.problem);
  const bag = propagation.createBaggage({ 'vision.subject': { value: 'acme' } });
  return trace
    .getTracer('test')
    .startActiveSpan('create task', (span) =>
      context.with(propagation.setBaggage(context.active(), bag), () =>
        guardStreamUrl(parsed.url, { allowPrivate: true, timeoutMs: 2000 }).finally(() => span.end()),
      ),
    );
};

test('the probe sends no trace context or baggage to the stream host', async () => {
  seen.length = 0;
  await guarded('/admin');
  expect(seen).toHaveLength(1);
  expect(seen[0].traceparent).toBeUndefined();
  expect(seen[0].tracestate).toBeUndefined();
  expect(seen[0].baggage).toBeUndefined();
});

test('the caller hears that the stream could not be opened, not which status its host answered', async () => {
  const notFound = await guarded('/admin');
  const unauthorized = await guarded('/login');
  expect(notFound).toEqual({
    ok: false,
    reason: 'stream_unreachable',
    problem: 'stream_url could not be opened',
  });
  expect(unauthorized).toEqual(notFound);
});
