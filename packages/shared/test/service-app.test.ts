import { generateKeyPairSync } from 'node:crypto';
import { Writable } from 'node:stream';
import request from 'supertest';
import {
  ApiError,
  createLogger,
  createServiceApp,
  IDENTITY_HEADER,
  identityOf,
  route,
  signIdentity,
  toApiError,
  overloaded,
  listen,
  closeServer,
  type ServiceAppOptions,
  type IdentityRoute,
} from '../src';
import { signerOf, verifierOf } from '../../../test/helpers/identity';

// The app stands for quota, which the gateway calls: headers signed with the gateway's key, for quota.
const gateway = signerOf('gateway');
const impostor = { issuer: 'gateway', key: generateKeyPairSync('ed25519').privateKey };

// The app's own routes, each open to the gateway's identity.
const ROUTES: IdentityRoute[] = [
  ...(['/boom', '/conflict', '/db-down', '/busy'] as const).map((path) => ({
    service: 'quota' as const,
    method: 'GET' as const,
    path,
    issuers: ['gateway' as const],
  })),
  { service: 'quota', method: 'POST', path: '/echo', issuers: ['gateway'] },
];

function makeApp(extra: Partial<ServiceAppOptions> = {}) {
  const lines: string[] = [];
  const logger = createLogger('svc', {
    level: 'info',
    destination: new Writable({
      write(chunk: Buffer, _e, cb) {
        lines.push(chunk.toString());
        cb();
      },
    }),
  });
  const app = createServiceApp(
    { name: 'svc', audience: 'quota', logger, identity: verifierOf('quota'), routes: ROUTES, ...extra },
    (a) => {
      a.post(
        '/echo',
        route(async (req, res) => {
          res.json({ subject: identityOf(res).subject, body: req.body as unknown });
        }),
      );
      a.get(
        '/boom',
        route(async () => {
          throw new Error('secret internals at /srv/app.js rtsp://u:p@h');
        }),
      );
      a.get(
        '/conflict',
        route(async () => {
          throw new ApiError('OP-TASK-NOT-STOPPABLE', 'Task already ended');
        }),
      );
      a.get(
        '/db-down',
        route(async () => {
          throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
        }),
      );
      a.get(
        '/busy',
        route(async () => {
          throw overloaded(1500, 'the test calls');
        }),
      );
      a.get('/open/ping', (_req, res) => void res.json({ ok: true }));
    },
  );
  return { app, lines };
}

const auth = (method: string, target: string) =>
  signIdentity(gateway, { subject: 'sub-1', requestId: 'r-1' }, 'quota', { method, target });

describe('createServiceApp', () => {
  it('answers /healthz without identity', async () => {
    const res = await request(makeApp().app).get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'up', service: 'svc' });
  });

  it('answers /readyz with detail; a failing dependency makes it 503, a degraded one does not', async () => {
    const ok = makeApp({
      readiness: { db: async () => undefined, limiter: async () => ({ degraded: 'memory' }) },
    }).app;
    const up = await request(ok).get('/readyz');
    expect(up.status).toBe(200);
    expect(up.body).toEqual({
      service: 'svc',
      status: 'degraded',
      dependencies: { db: { status: 'up' }, limiter: { status: 'degraded', error: 'memory' } },
    });
    const bad = makeApp({
      readiness: {
        db: async () => undefined,
        bus: async () => {
          throw new Error('broker unreachable');
        },
      },
    }).app;
    const down = await request(bad).get('/readyz');
    expect(down.status).toBe(503);
    expect(down.body.status).toBe('down');
    expect(down.body.dependencies).toEqual({
      db: { status: 'up' },
      bus: { status: 'down', error: 'broker unreachable' },
    });
  });

  it('requires the signed identity with a 401 envelope', async () => {
    const { app } = makeApp();
    const echo = { method: 'POST', target: '/echo' };
    for (const header of [
      undefined,
      'garbage',
      signIdentity(impostor, { subject: 's', requestId: 'r' }, 'quota', echo),
      signIdentity(impostor, { subject: 's', requestId: 'r' }, 'quota', echo, Date.now() - 60_000),
      // for another service, or for another request
      signIdentity(gateway, { subject: 's', requestId: 'r' }, 'tasks', echo),
      signIdentity(gateway, { subject: 's', requestId: 'r' }, 'quota', { method: 'GET', target: '/echo' }),
    ]) {
      const req = request(app).post('/echo').send({ a: 1 });
      const res = header ? await req.set(IDENTITY_HEADER, header) : await req;
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ code: 'OP-AUTH-REQUIRED' });
      expect(typeof res.body.error.request_id).toBe('string');
    }
    const res = await request(app).post('/echo').set(IDENTITY_HEADER, auth('POST', '/echo')).send({ a: 1 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ subject: 'sub-1', body: { a: 1 } });
  });

  it('answers a valid identity that expired while the call waited with 503 and Retry-After, never 401', async () => {
    const { app } = makeApp();
    const echo = { method: 'POST', target: '/echo' };
    for (const at of [Date.now() - 60_000, Date.now() + 60_000]) {
      const res = await request(app)
        .post('/echo')
        .set(IDENTITY_HEADER, signIdentity(gateway, { subject: 's', requestId: 'r' }, 'quota', echo, at))
        .send({ a: 1 });
      expect(res.status).toBe(503);
      expect(res.body.error).toMatchObject({
        code: 'OP-SYS-UNAVAILABLE',
        details: { reason: 'deadline_exceeded' },
      });
      expect(res.headers['retry-after']).toBe('1');
    }
  });

  it('skips identity on public paths', async () => {
    const res = await request(makeApp({ publicPaths: ['/open/'] }).app).get('/open/ping');
    expect(res.status).toBe(200);
  });

  it('answers malformed JSON with 400 OP-TASK-REQUEST-INVALID, never 500', async () => {
    const res = await request(makeApp().app)
      .post('/echo')
      .set(IDENTITY_HEADER, auth('POST', '/echo'))
      .set('Content-Type', 'application/json')
      .send('{"a": 1,,');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'OP-TASK-REQUEST-INVALID',
      details: { reason: 'malformed_json' },
    });
  });

  it('refuses malformed percent-encoding and control characters in the target with 400, before identity', async () => {
    const { app } = makeApp();
    for (const [target, reason] of [
      ['/items/%ZZ', 'invalid_path'],
      ['/items/%00', 'invalid_path'],
      ['/items/a%7Fb', 'invalid_path'],
      ['/items?x=%E0%A4%A', 'invalid_query'],
      ['/items?x=a%00', 'invalid_query'],
    ]) {
      const res = await request(app).get(target);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'OP-TASK-REQUEST-INVALID', details: { reason } });
    }
  });

  it('maps client errors raised by express to 400, never 500 (multipart faults: the shared reader)', () => {
    const uriError = Object.assign(new URIError('Failed to decode param'), { status: 400 });
    expect(toApiError(uriError)).toMatchObject({ status: 400, details: { reason: 'malformed_request' } });
    expect(
      toApiError(Object.assign(new Error('aborted'), { type: 'request.aborted', status: 400 })),
    ).toMatchObject({ status: 400, details: { reason: 'body_truncated' } });
    expect(toApiError(new Error('something else')).status).toBe(500);
  });

  it('listens without a deadline for whole requests (a slow but steady upload is not cut at 300 s)', async () => {
    const server = await listen(makeApp().app, 0, '127.0.0.1');
    try {
      expect(server.requestTimeout).toBe(0);
      expect(server.headersTimeout).toBeGreaterThan(0); // a client that never finishes its head still is
    } finally {
      await closeServer(server);
    }
  });

  it('answers unknown routes with a JSON 404 envelope', async () => {
    const res = await request(makeApp().app).get('/nope').set(IDENTITY_HEADER, auth('GET', '/nope'));
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.body.error.code).toBe('OP-NOT-FOUND');
  });

  it('maps ApiError and unavailable dependencies to their statuses', async () => {
    const { app } = makeApp();
    const conflict = await request(app).get('/conflict').set(IDENTITY_HEADER, auth('GET', '/conflict'));
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('OP-TASK-NOT-STOPPABLE');
    const down = await request(app).get('/db-down').set(IDENTITY_HEADER, auth('GET', '/db-down'));
    expect(down.status).toBe(503);
    expect(down.body.error.code).toBe('OP-SYS-UNAVAILABLE');
    expect(JSON.stringify(down.body)).not.toContain('5432');
  });

  it('never leaks stack traces or internals in responses, and logs without credentials', async () => {
    const { app, lines } = makeApp();
    const res = await request(app)
      .get('/boom')
      .set(IDENTITY_HEADER, auth('GET', '/boom'))
      .set('X-Request-Id', 'req-abc');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      error: { code: 'OP-SYS-INTERNAL', message: 'Internal error', request_id: 'req-abc' },
    });
    expect(res.headers['x-request-id']).toBe('req-abc');
    expect(res.text).not.toMatch(/secret internals|\/srv\/app\.js|at .*\.ts/);
    const logged = lines.join('');
    expect(logged).toContain('request failed');
    expect(logged).not.toContain('u:p@');
  });

  it('logs a call shed for load as a refusal, without a stack, and answers it with Retry-After', async () => {
    const { app, lines } = makeApp();
    const res = await request(app).get('/busy').set(IDENTITY_HEADER, auth('GET', '/busy'));
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('2');
    expect(res.body.error.details.reason).toBe('overloaded');
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const refusal = logged.find((l) => l.msg === 'request refused');
    expect(refusal).toMatchObject({ level: 30, reason: 'overloaded', code: 'OP-SYS-UNAVAILABLE' });
    expect(refusal).not.toHaveProperty('err');
    expect(logged.some((l) => l.msg === 'request failed')).toBe(false);
  });
});
