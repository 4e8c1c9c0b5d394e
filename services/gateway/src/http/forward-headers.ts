import type { IncomingMessage } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import { propagation } from '@opentelemetry/api';
import type { Dispatcher } from 'undici';
import { LOAD_HEADER } from '@vision/shared';

/** Counts bytes flowing through and fails once more than `limit` have passed. */
export class ByteCap extends Transform {
  private seen = 0;
  exceeded = false;
  constructor(private readonly limit: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.limit) {
      this.exceeded = true;
      cb(new Error('request body exceeds the limit'));
      return;
    }
    cb(null, chunk);
  }
}

/** True when a request carries no body (reads, deletes, bodiless POSTs): it can share a pooled connection. */
export function isBodiless(headers: IncomingMessage['headers']): boolean {
  if (headers['transfer-encoding'] !== undefined) return false;
  const length = headers['content-length'];
  return length === undefined || Number(length) === 0;
}

/** Headers that describe one connection, never forwarded (RFC 9110 7.6.1); `expect` is answered here. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade', 'expect'];

/**
 * Removes the hop-by-hop headers of the client's connection (RFC 9110 7.6.1): a client's
 * `Connection: close` must not close a pooled upstream connection.
 */
export function dropHopByHopHeaders(headers: IncomingMessage['headers']): void {
  const named = String(headers.connection ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  for (const h of [...HOP_BY_HOP, ...named]) delete headers[h];
}

/** The headers sent upstream: the client's, less hop-by-hop ones and framing undici sets itself, plus X-Forwarded-*. */
export function upstreamHeaders(req: IncomingMessage): Record<string, string | string[]> {
  const headers = { ...req.headers };
  dropHopByHopHeaders(headers);
  delete headers['transfer-encoding'];
  // With tracing on, the request's trace context is the gateway's own span, which the undici
  // instrumentation injects: a client's header left in place would travel as a second value, and the
  // upstream would start a trace of its own. With tracing off (no propagator), the client's pass through.
  for (const h of propagation.fields()) delete headers[h.toLowerCase()];
  const host = headers.host;
  delete headers.host;
  const addr = req.socket.remoteAddress ?? '';
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = v;
  out['x-forwarded-for'] = headers['x-forwarded-for']
    ? `${String(headers['x-forwarded-for'])},${addr}`
    : addr;
  out['x-forwarded-proto'] = 'http';
  if (host) out['x-forwarded-host'] = host;
  return out;
}

/** Copies an upstream answer's headers, less the hop-by-hop ones (Node frames the client's response itself). */
export function clientHeaders(
  headers: Dispatcher.ResponseData['headers'],
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    // The backend's load report is the gateway's (the door), never the client's.
    if (v === undefined || HOP_BY_HOP.includes(k) || k === 'transfer-encoding' || k === LOAD_HEADER) continue;
    out[k] = v;
  }
  return out;
}
