import diagnostics from 'node:diagnostics_channel';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { closeServer, createLogger, createServiceApp, listen } from '@vision/shared';
import { start, type RunningGateway } from '../src/index';
import { dropHopByHopHeaders, isBodiless } from '../src/http/proxy';
import { closedPort } from '../../../test/helpers/closed-port';
import { identityDir, verifierOfAll } from '../../../test/helpers/identity';

const KEY = 'key-pool-aaaaaaaa';
const logger = createLogger('test', { level: 'silent' });

/** A gateway whose every upstream is `server`, with the test key. */
function gatewayInFrontOf(server: http.Server, env: Record<string, string> = {}): Promise<RunningGateway> {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return start({
    env: {
      VISION_DATA_DIR: ':memory:',
      VISION_IDENTITY_DIR: identityDir(),
      LOG_LEVEL: 'silent',
      VISION_API_KEYS: `${KEY}:pool`,
      GATEWAY_QPS: '1000',
      GATEWAY_BURST: '1000',
      TASKS_URL: url,
      RESULTS_URL: url,
      QUOTA_URL: url,
      IMAGES_URL: url,
      ...env,
    },
    port: 0,
    host: '127.0.0.1',
    logger,
  });
}

const readThrough = (gw: RunningGateway) =>
  request(gw.url).get('/v1/vision/tasks/t1/results').set('Authorization', `Bearer ${KEY}`);

describe('isBodiless', () => {
  it('tells reads from requests that carry a body', () => {
    expect(isBodiless({})).toBe(true);
    expect(isBodiless({ 'content-length': '0' })).toBe(true);
    expect(isBodiless({ 'content-length': '12' })).toBe(false);
    expect(isBodiless({ 'transfer-encoding': 'chunked' })).toBe(false);
  });
});

describe('dropHopByHopHeaders', () => {
  it('removes the connection headers and those Connection names, keeping the rest', () => {
    const h: http.IncomingHttpHeaders = {
      connection: 'close, X-Hop',
      'keep-alive': 'timeout=5',
      'x-hop': '1',
      'x-request-id': 'r1',
      accept: 'application/json',
    };
    dropHopByHopHeaders(h);
    expect(h).toEqual({ 'x-request-id': 'r1', accept: 'application/json' });
  });
});

describe('gateway upstream connections', () => {
  let gw: RunningGateway;
  let server: http.Server;
  /** Upstream-side client port of each request, in arrival order. */
  const ports: { path: string; port: number }[] = [];
  let release: () => void = () => undefined;
  let held: Promise<void> = Promise.resolve();
  let inFlight = 0;
  let maxInFlight = 0;

  beforeAll(async () => {
    const app = createServiceApp(
      { name: 'echo', audience: ['tasks', 'quota', 'results', 'images'], logger, identity: verifierOfAll() },
      (a) => {
        a.all('/{*any}', (req, res, next) => {
          ports.push({ path: req.path, port: req.socket.remotePort ?? -1 });
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          held
            .then(() => {
              inFlight--;
              res.json({ ok: true });
            })
            .catch(next);
        });
      },
    );
    server = await listen(app, 0, '127.0.0.1');
    gw = await gatewayInFrontOf(server, { GATEWAY_CONCURRENCY: '50', GATEWAY_UPSTREAM_SOCKETS: '2' });
  });
  afterAll(async () => {
    await gw.close();
    await closeServer(server);
  });
  beforeEach(() => {
    ports.length = 0;
    maxInFlight = 0;
  });

  const read = () => readThrough(gw);

  it('sends consecutive reads over one kept-alive upstream connection, whatever the client asks of its own', async () => {
    for (let i = 0; i < 5; i++)
      expect((await read().set('Connection', i % 2 ? 'close' : 'keep-alive')).status).toBe(200);
    expect(ports).toHaveLength(5);
    expect(new Set(ports.map((p) => p.port)).size).toBe(1);
  });

  it('bounds concurrent reads per upstream by the pool; the rest wait their turn and all complete', async () => {
    held = new Promise<void>((r) => (release = r));
    const pending = Array.from({ length: 6 }, () => read().then((r) => r.status));
    // Only the pool's two connections reach the upstream while it holds its answers.
    await new Promise((r) => setTimeout(r, 300));
    const reached = ports.length;
    release();
    expect(reached).toBe(2);
    expect(await Promise.all(pending)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(maxInFlight).toBe(2);
    expect(new Set(ports.map((p) => p.port)).size).toBeLessThanOrEqual(2);
  });

  it('gives each upload a connection of its own, outside the pool', async () => {
    held = new Promise<void>((r) => (release = r));
    const reads = Array.from({ length: 2 }, () => read().then((r) => r.status));
    const upload = request(gw.url)
      .post('/v1/vision/tasks')
      .set('Authorization', `Bearer ${KEY}`)
      .send({ scene: 'x' })
      .then((r) => r.status);
    await new Promise((r) => setTimeout(r, 300));
    const reached = ports.map((p) => p.port);
    release();
    // Both pooled connections are busy, yet the upload reached the upstream on a third one.
    expect(reached).toHaveLength(3);
    expect(new Set(reached).size).toBe(3);
    expect(await Promise.all([...reads, upload])).toEqual([200, 200, 200]);
  });
});

describe('gateway retry of a read whose pooled connection was closed', () => {
  let gw: RunningGateway;
  let server: http.Server;
  let mode: 'drop-second-on-socket' | 'drop-all' = 'drop-second-on-socket';
  const arrivals: { socketRequest: number; xff?: string }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const socket = req.socket as typeof req.socket & { served?: number };
      socket.served = (socket.served ?? 0) + 1;
      arrivals.push({
        socketRequest: socket.served,
        xff: req.headers['x-forwarded-for'] as string | undefined,
      });
      // As an upstream that closed an idle connection just as the next request went out.
      if (mode === 'drop-all' || socket.served === 2) return void socket.destroy();
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    gw = await gatewayInFrontOf(server);
  });
  afterAll(async () => {
    await gw.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const read = () => readThrough(gw);

  it('sends the read again on a fresh connection, once, with the same forwarded headers', async () => {
    expect((await read()).status).toBe(200);
    expect((await read()).status).toBe(200); // its pooled connection was dropped: retried
    expect(arrivals.map((a) => a.socketRequest)).toEqual([1, 2, 1]);
    expect(arrivals[2].xff).toBe(arrivals[0].xff);
    expect(arrivals[2].xff).not.toContain(',');
  });

  it('answers 503 when the upstream keeps failing, after at most one retry', async () => {
    arrivals.length = 0;
    mode = 'drop-all';
    const r = await read();
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe('OP-SYS-UNAVAILABLE');
    expect(arrivals.length).toBeLessThanOrEqual(2);
  });
});

describe('an upstream that refuses the connection', () => {
  let gw: RunningGateway;
  let port = 0;
  const upstream = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"stopped":true}');
  });
  beforeAll(async () => {
    // The gateway's upstreams: a port on which nothing listens.
    port = await closedPort();
    gw = await gatewayInFrontOf({ address: () => ({ port }) } as unknown as http.Server);
  });
  afterAll(async () => {
    await gw.close();
    upstream.closeAllConnections();
    await new Promise((r) => upstream.close(r));
  });
  const stop = () => request(gw.url).post('/v1/vision/tasks/t1/stop').set('Authorization', `Bearer ${KEY}`);

  it('answers 503 once the second connection is refused too', async () => {
    let refused = 0;
    const count = () => refused++;
    diagnostics.subscribe('undici:client:connectError', count);
    try {
      const r = await stop();
      expect({ status: r.status, code: r.body.error?.code, refused }).toEqual({
        status: 503,
        code: 'OP-SYS-UNAVAILABLE',
        refused: 2,
      });
    } finally {
      diagnostics.unsubscribe('undici:client:connectError', count);
    }
  });

  it('gets a request without a body once more on a new connection, whatever its method', async () => {
    // Nothing listens until the first connection is refused, as a Service gives the second connection to another
    // endpoint in a rollout.
    const start = () => {
      diagnostics.unsubscribe('undici:client:connectError', start);
      upstream.listen(port, '127.0.0.1');
    };
    diagnostics.subscribe('undici:client:connectError', start);
    try {
      const r = await stop();
      expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { stopped: true } });
    } finally {
      diagnostics.unsubscribe('undici:client:connectError', start);
    }
  });
});
