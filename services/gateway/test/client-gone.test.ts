/**
 * A caller that went away before its call was forwarded (while its key and rate were checked, or at the door): the
 * forwarder sends nothing upstream for it. Before, its read went upstream, and the answer's body was destroyed
 * unread with no listener for the error that emits.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createLogger } from '@vision/shared';
import { createForwarder } from '../src/http/proxy';

const listen = (server: http.Server) =>
  new Promise<string>((r) =>
    server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );

describe('a caller gone before its call is forwarded', () => {
  const servers: http.Server[] = [];
  let upstreamCalls = 0;
  let front = '';
  /** Each call forwarded after its caller left, settled 300 ms after. */
  const forwarded: Promise<void>[] = [];

  beforeAll(async () => {
    // The upstream answers at once, with more than a socket's buffer, so its body is still arriving when relayed.
    const upstream = http.createServer((req, res) => {
      upstreamCalls++;
      req.resume();
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.alloc(1 << 20));
    });
    servers.push(upstream);
    const target = { url: await listen(upstream), name: 'results' };
    const forward = createForwarder(createLogger('gateway', { level: 'silent' }), {
      timeoutMs: 5000,
      pooledSockets: 4,
      uploadIdleMs: 5000,
      streamStallMs: 30_000,
    });
    // As the door does: the call waits its turn; the caller closes its connection meanwhile; then it is admitted.
    // (The gateway's handler is express: its errors are answered with the envelope.)
    const app = express();
    app.use((req, res) => {
      forwarded.push(
        new Promise((resolve) =>
          res.once('close', () =>
            setTimeout(() => {
              forward(req, res, target, 1 << 20);
              setTimeout(resolve, 300);
            }, 50),
          ),
        ),
      );
    });
    const gateway = http.createServer(app);
    servers.push(gateway);
    front = await listen(gateway);
  });
  afterAll(async () => {
    for (const s of servers) s.closeAllConnections();
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  });

  /** Sends a request and closes its connection before any answer. */
  const goAway = async (init: RequestInit) => {
    const ac = new AbortController();
    const sent = fetch(`${front}/v1/vision/tasks/t1/results`, { ...init, signal: ac.signal }).catch(
      (err: Error) => err.name,
    );
    await new Promise((r) => setTimeout(r, 100));
    ac.abort();
    expect(await sent).toBe('AbortError');
  };

  it('a read: nothing goes upstream', async () => {
    const before = upstreamCalls;
    await goAway({});
    await Promise.all(forwarded);
    expect(upstreamCalls - before).toBe(0);
  });

  it('an upload: nothing goes upstream', async () => {
    const before = upstreamCalls;
    await goAway({ method: 'POST', body: 'x'.repeat(1000), headers: { 'content-type': 'text/plain' } });
    await Promise.all(forwarded);
    expect(upstreamCalls - before).toBe(0);
  });
});
