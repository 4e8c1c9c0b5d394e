/**
 * The drain of a stopping process (drainServers, called by runMain on SIGTERM): the answers in flight finish and
 * close their connections, no new connection is taken, idle keep-alive connections close, and what is still open at
 * the deadline is cut.
 */
import http from 'node:http';
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

  test('an idle keep-alive connection does not hold the drain', async () => {
    const { server, port } = await slowServer(0);
    const agent = new http.Agent({ keepAlive: true });
    try {
      expect(await call(port, '/fast', agent)).toMatchObject({ status: 200, connection: 'keep-alive' });
      const started = Date.now();
      await drainServers(5_000);
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      agent.destroy();
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
