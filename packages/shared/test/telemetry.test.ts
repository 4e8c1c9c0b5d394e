import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startTelemetry } from '../src/telemetry';

describe('telemetry', () => {
  it('records outgoing fetches with secret query parameters redacted', async () => {
    const exporter = new InMemorySpanExporter();
    const handle = startTelemetry('telemetry-test', {}, [new SimpleSpanProcessor(exporter)]);
    const server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (server.address() as AddressInfo).port;
      await (await fetch(`http://127.0.0.1:${port}/live.m3u8?token=s3cr3t-value&x=1`)).text();
      await new Promise((r) => setTimeout(r, 100));
      const spans = exporter.getFinishedSpans();
      const client = spans.find((s) => String(s.attributes['url.full'] ?? '').includes('/live.m3u8'));
      expect(client).toBeDefined();
      expect(client!.resource.attributes['service.name']).toBe('telemetry-test');
      const text = JSON.stringify(spans.map((s) => s.attributes));
      expect(text).not.toContain('s3cr3t-value');
      expect(text).toContain('token=***');
    } finally {
      server.close();
      await handle.shutdown();
    }
  });
});
