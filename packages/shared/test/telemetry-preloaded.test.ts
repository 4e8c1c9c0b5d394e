/**
 * Telemetry starts after @vision/shared is loaded (its own imports load node:http, express and pg), and
 * a server made by `listen` from those first imports must still be traced: a server span per request,
 * named by route and joining the caller's trace. Jest's module registry bypasses the instrumentations'
 * require hook, so this runs in a plain Node process against the built package.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PACKAGE = path.resolve(__dirname, '..');

// Everything the script needs is required before telemetry starts, as in a service's entry point; the
// request is written on a raw socket so that no client instrumentation sets a trace context of its own.
const SCRIPT = `
const net = require('node:net');
const express = require('express');
const shared = require('./dist');
const { InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace');
const exporter = new InMemorySpanExporter();
shared.startTelemetry('preloaded', {}, [new SimpleSpanProcessor({ exporter })]);
const app = express();
app.get('/things/:id', (_req, res) => res.json({ ok: true }));
shared.listen(app, 0, '127.0.0.1').then((server) => {
  const socket = net.connect(server.address().port, '127.0.0.1');
  socket.end('GET /things/7 HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n' +
    'traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\\r\\n\\r\\n');
  socket.resume();
  socket.on('close', () => setTimeout(() => {
    const spans = exporter.getFinishedSpans().filter((s) => s.kind === 1);
    process.stdout.write(JSON.stringify(spans.map((s) => ({
      name: s.name, traceId: s.spanContext().traceId, parent: s.parentSpanContext && s.parentSpanContext.spanId,
    }))));
    process.exit(0);
  }, 100));
});
`;

describe('telemetry started after the package that creates the servers', () => {
  it("traces a server created from the package's earlier import of node:http", async () => {
    const { stdout } = await run(process.execPath, ['-e', SCRIPT], { cwd: PACKAGE, timeout: 30_000 });
    expect(JSON.parse(stdout)).toEqual([
      { name: 'GET /things/:id', traceId: '0af7651916cd43dd8448eb211c80319c', parent: 'b7ad6b7169203331' },
    ]);
  });
});
