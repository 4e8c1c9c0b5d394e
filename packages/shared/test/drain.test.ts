/**
 * The drain of a stopping process (drainServers, called by runMain on SIGTERM): the answers in flight finish and
 * close their connections, no new connection is taken, an idle keep-alive connection carries its client's next
 * request before it closes (or ends at the keep-alive timeout), and what is still open at the deadline is cut.
 */
import http from 'node:http';
import net from 'node:net';
import express from 'express';
import { closeServer, drainServers, listen } from '../src/edge/server';

/** A server whose /slow answers after `ms` and whose /never never answers. */
async function slowServer(ms: number) {
  const app = express();
  app.get('/slow', (_req, res) => setTimeout(() => res.json({ ok: true }), ms));
  app.get('/never', () => undefined);
  app.get('/fast', (_req, res) => res.json({ ok: true }));
  const server = await listen(app, 0, '127.0.0.1');
  const { port } = server.address() as { port: number };
  return { server, port };
}

interface Answer {
  status?: number;
  connection?: string;
  error?: string;
}

function call(port: number, path: string, agent?: http.Agent): Promise<Answer> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
      res.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
  });
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('drainServers', () => {
  test('an answer in flight finishes, closes its connection, and no new connection is taken', async () => {
    const { server, port } = await slowServer(400);
    const agent = new http.Agent({ keepAlive: true });
    try {
      const inFlight = call(port, '/slow', agent);
      await tick(50);
      const started = Date.now();
      const drained = drainServers(5_000);
      await tick(20);
      expect(await call(port, '/fast')).toEqual({ error: 'ECONNREFUSED' });
      expect(await inFlight).toEqual({ status: 200, connection: 'close' });
      await drained;
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(server.listening).toBe(false);
    } finally {
      agent.destroy();
      await closeServer(server);
    }
  });

  test('an idle keep-alive connection is left to its client: its next request is answered, then it closes', async () => {
    const { server, port } = await slowServer(0);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect(await call(port, '/fast', agent)).toMatchObject({ status: 200, connection: 'keep-alive' });
      const started = Date.now();
      const drained = drainServers(5_000);
      // Closed from this side, the request sent on it now would be reset, or refused on a new connection.
      await tick(200);
      expect(await call(port, '/fast', agent)).toEqual({ status: 200, connection: 'close' });
      await drained;
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      agent.destroy();
      await closeServer(server);
    }
  });

  test('a keep-alive connection its client leaves idle ends at the keep-alive timeout', async () => {
    const { server, port } = await slowServer(0);
    server.keepAliveTimeout = 500;
    // A client that keeps its connection and never closes it: no agent reading the Keep-Alive hint.
    const socket = net.connect(port, '127.0.0.1');
    try {
      socket.write('GET /fast HTTP/1.1\r\nHost: drain.test\r\n\r\n');
      const head = await new Promise<string>((resolve) =>
        socket.once('data', (b: Buffer) => resolve(String(b))),
      );
      expect(head).toMatch(/^HTTP\/1\.1 200[^]*Connection: keep-alive/i);
      const closed = new Promise((resolve) => socket.once('close', resolve));
      const started = Date.now();
      await drainServers(5_000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
      expect(Date.now() - started).toBeLessThan(3_000);
      await closed;
    } finally {
      socket.destroy();
      await closeServer(server);
    }
  });

  test('what is still open at the deadline is cut', async () => {
    const { server, port } = await slowServer(0);
    try {
      const stuck = call(port, '/never');
      await tick(50);
      const started = Date.now();
      await drainServers(300);
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      expect(await stuck).toEqual({ error: 'ECONNRESET' });
    } finally {
      await closeServer(server);
    }
  });
});
