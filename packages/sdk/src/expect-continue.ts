import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

/**
 * How long an upload waits for `100 Continue` before it sends its body anyway (as curl does): a server
 * or proxy that does not know `Expect` never sends it.
 */
export const EXPECT_WAIT_MS = 1000;

/** Statuses whose answer has no body (a Response with one cannot be made). */
const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * Sends an upload with `Expect: 100-continue` (the global fetch cannot): its body leaves only once the
 * service said `100 Continue`, so a refusal (503 overloaded, 401, a too-large declared length) comes
 * before any byte of it was sent. A final answer instead of 100 is returned as it is, and the connection
 * is closed without the body (RFC 9110 10.1.1). With no answer within EXPECT_WAIT_MS the body is sent.
 * Network failures reject with a TypeError whose cause is the Node error, as fetch's do.
 */
export function expectContinueFetch(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const headers: Record<string, string> = { expect: '100-continue' };
  request.headers.forEach((value, name) => (headers[name] = value));
  const send = url.protocol === 'https:' ? https.request : http.request;
  return new Promise<Response>((resolve, reject) => {
    let bodySent = false;
    const req = send(url, { method: request.method, headers, agent: false, signal: request.signal });
    const sendBody = () => {
      if (bodySent) return;
      bodySent = true;
      clearTimeout(wait);
      if (!request.body) return void req.end();
      const body = Readable.fromWeb(request.body as NodeReadableStream<Uint8Array>);
      body.on('error', (err) => req.destroy(err));
      body.pipe(req);
    };
    const wait = setTimeout(sendBody, EXPECT_WAIT_MS);
    req.once('continue', sendBody);
    req.once('response', (res) => {
      clearTimeout(wait);
      // Answered before the body was asked for: it is never sent, and the connection is not reused.
      if (!bodySent) {
        bodySent = true;
        res.once('close', () => req.destroy());
      }
      const out = new Headers();
      for (const [name, value] of Object.entries(res.headers))
        for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value])
          out.append(name, v);
      const status = res.statusCode ?? 502;
      if (NO_BODY.has(status) || request.method === 'HEAD') res.resume();
      const body =
        NO_BODY.has(status) || request.method === 'HEAD'
          ? null
          : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>);
      resolve(new Response(body, { status, statusText: res.statusMessage, headers: out }));
    });
    req.once('error', (err) => {
      clearTimeout(wait);
      if (request.signal.aborted) return reject(request.signal.reason);
      reject(new TypeError('fetch failed', { cause: err }));
    });
    req.flushHeaders();
  });
}
