/**
 * An OTLP/HTTP trace receiver inside a test: a process started with OTEL_EXPORTER_OTLP_ENDPOINT set to
 * `endpoint` posts its span batches here (the exporter's JSON encoding, gzip or plain), and the test
 * reads every batch as it was sent.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface OtlpReceiver {
  /** The value for OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  /** Every export request body received, parsed, in arrival order. */
  batches: unknown[];
  close(): Promise<void>;
}

/** One span of a batch, with the `service.name` of its resource. */
export interface ReceivedSpan {
  service: string;
  name: string;
  attributes: Record<string, unknown>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const batches: unknown[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let raw = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
      if (req.url === '/v1/traces' && req.method === 'POST') {
        try {
          batches.push(JSON.parse(raw.toString('utf8')));
        } catch {
          // Not JSON (a protobuf exporter): kept as text, still searched by the test.
          batches.push(raw.toString('latin1'));
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    batches,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type AnyValue = { stringValue?: string; intValue?: unknown; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

const valueOf = (v: AnyValue): unknown => v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue;
const record = (kvs: KeyValue[] = []) => Object.fromEntries(kvs.map((kv) => [kv.key, valueOf(kv.value)]));

/** The spans of every received batch. */
export function receivedSpans(r: OtlpReceiver): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const batch of r.batches) {
    if (typeof batch !== 'object' || batch === null) continue;
    const resourceSpans = (batch as { resourceSpans?: unknown[] }).resourceSpans ?? [];
    for (const rs of resourceSpans as {
      resource?: { attributes?: KeyValue[] };
      scopeSpans?: { spans?: { name: string; attributes?: KeyValue[] }[] }[];
    }[]) {
      const service = String(record(rs.resource?.attributes)['service.name'] ?? '?');
      for (const ss of rs.scopeSpans ?? [])
        for (const s of ss.spans ?? []) out.push({ service, name: s.name, attributes: record(s.attributes) });
    }
  }
  return out;
}
