import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import request from 'supertest';
import {
  createLogger,
  createServiceApp,
  identityOf,
  IDENTITY_HEADER,
  listen,
  closeServer,
  metrics,
  signIdentity,
  type RunningService,
} from '@vision/shared';
import { start, type RunningGateway } from '../src/index';
import { assertMatchesOpenApi } from '../../../test/helpers/openapi';
import { identityDir, verifierOfAll } from '../../../test/helpers/identity';

const logger = createLogger('test', { level: 'silent' });

/** The sum of a counter's series with these labels (vision_gateway_*: docs/OPERATIONS.md, "Metrics"). */
async function counted(
  counter: typeof metrics.authFailures | typeof metrics.rateLimited,
  labels: Record<string, string>,
): Promise<number> {
  const { values } = await counter.family.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k as 'reason']) === want))
    .reduce((sum, v) => sum + v.value, 0);
}

interface Upstream {
  server: http.Server;
  url: string;
  hits: number;
  seen: { subject: string; headers: http.IncomingHttpHeaders }[];
  hold?: Promise<void>;
}

/** A real service app (shared createServiceApp) that verifies the signed identity and echoes it. */
async function upstream(): Promise<Upstream> {
  const u = { hits: 0, seen: [] } as unknown as Upstream;
  const app = createServiceApp(
    { name: 'echo', audience: ['tasks', 'quota', 'results', 'images'], logger, identity: verifierOfAll() },
    (a) => {
      a.all('/{*any}', (req, res, next) => {
        u.hits++;
        const id = identityOf(res);
        u.seen.push({ subject: id.subject, headers: req.headers });
        if (req.path === '/v1/vision/video-tasks') {
          let bytes = 0;
          req.on('data', (c: Buffer) => (bytes += c.length));
          req.on('end', () => res.status(201).json({ bytes }));
          return;
        }
        Promise.resolve(u.hold)
          .then(() => res.json({ subject: id.subject, path: req.path }))
          .catch(next);
      });
    },
  );
  u.server = await listen(app, 0, '127.0.0.1');
  u.url = `http://127.0.0.1:${(u.server.address() as AddressInfo).port}`;
  return u;
}

describe('gateway', () => {
  let gw: RunningGateway;
  let up: Upstream;
  let downPort: number;

  beforeAll(async () => {
    up = await upstream();
    const tmp = http.createServer();
    await new Promise<void>((r) => tmp.listen(0, '127.0.0.1', () => r()));
    downPort = (tmp.address() as AddressInfo).port;
    await new Promise<void>((r) => tmp.close(() => r()));
    gw = await start({
      env: {
        VISION_DATA_DIR: ':memory:',
        VISION_IDENTITY_DIR: identityDir(),
        LOG_LEVEL: 'silent',
        VISION_API_KEYS:
          'key-acme-aaaaaaaa:acme,key-acme-bbbbbbbb:acme,key-other-cccccccc:other,key-limited-dddddddd:limited,key-conc-eeeeeeee:conc',
        GATEWAY_QPS: '1000',
        GATEWAY_BURST: '1000',
        GATEWAY_CONCURRENCY: '50',
        GATEWAY_LIMIT_OVERRIDES: JSON.stringify({ limited: { qps: 1, burst: 2 }, conc: { concurrency: 2 } }),
        TASKS_URL: up.url,
        RESULTS_URL: up.url,
        QUOTA_URL: up.url,
        IMAGES_URL: `http://127.0.0.1:${downPort}`,
      },
      port: 0,
      host: '127.0.0.1',
      logger,
    });
  });
  afterAll(async () => {
    await gw.close();
    await closeServer(up.server);
  });

  const routes: [string, string][] = [
    ['post', '/v1/vision/tasks'],
    ['get', '/v1/vision/tasks'],
    ['post', '/v1/vision/video-tasks'],
    ['get', '/v1/vision/tasks/t1'],
    ['post', '/v1/vision/tasks/t1/stop'],
    ['get', '/v1/vision/tasks/t1/results'],
    ['post', '/v1/vision/image-detections'],
    ['get', '/api/op/v1/scenes'],
    ['get', '/v1/vision/quota'],
    ['get', '/no/such/route'],
  ];

  it('answers 401 OP-AUTH-REQUIRED on every public route for missing, malformed, unknown and revoked keys', async () => {
    const created = await gw.keys.create('acme');
    expect(await gw.keys.revoke(created.keyId)).toBe(true);
    const bad: (string | undefined)[] = [
      undefined,
      'Bearer',
      'Basic a2V5LWFjbWUtYWFhYWFhYWE=',
      'Bearer\tkey-acme-aaaaaaaa',
      'Bearer  key-acme-aaaaaaaa',
      'Bearer key-acme-aaaaaaaa trailing',
      'Bearer unknown-key-zzzzzzzz',
      `Bearer ${created.key}`,
    ];
    const hitsBefore = up.hits;
    const reasons = ['missing', 'malformed', 'unknown_key'];
    const failuresBefore = await Promise.all(
      reasons.map((reason) => counted(metrics.authFailures, { reason })),
    );
    for (const [method, path] of routes) {
      for (const auth of bad) {
        let r = request(gw.url)[method as 'get' | 'post'](path);
        if (auth !== undefined) r = r.set('Authorization', auth);
        const res = await r;
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('OP-AUTH-REQUIRED');
        expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
        if (path !== '/no/such/route')
          assertMatchesOpenApi(method, path, res.status, res.headers['content-type'], res.body);
      }
    }
    expect(up.hits).toBe(hitsBefore);
    // Every refusal is counted once, by reason: no header; a header that is not `Bearer <key>`; a key
    // that is unknown or revoked.
    const failures = (
      await Promise.all(reasons.map((reason) => counted(metrics.authFailures, { reason })))
    ).map((n, i) => n - failuresBefore[i]);
    expect(failures).toEqual([routes.length, 5 * routes.length, 2 * routes.length]);
  });

  it('takes the scheme name in any case (bearer, BEARER), never the key', async () => {
    for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
      const ok = await request(gw.url)
        .get('/v1/vision/tasks/t1')
        .set('Authorization', `${scheme} key-acme-aaaaaaaa`);
      expect(ok.status).toBe(200);
    }
    const wrongCase = await request(gw.url)
      .get('/v1/vision/tasks/t1')
      .set('Authorization', 'Bearer KEY-ACME-AAAAAAAA');
    expect(wrongCase.status).toBe(401);
  });

  it('keeps /healthz and /readyz open', async () => {
    expect((await request(gw.url).get('/healthz')).status).toBe(200);
    const ready = await request(gw.url).get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'up' });
  });

  it('routes to the owning service with a signed identity, stripping client-sent identity and the key', async () => {
    const forged = signIdentity(
      { issuer: 'gateway', key: generateKeyPairSync('ed25519').privateKey },
      { subject: 'other', requestId: 'x' },
      'tasks',
      { method: 'GET', target: '/v1/vision/tasks/t1' },
    );
    const res = await request(gw.url)
      .get('/v1/vision/tasks/t1')
      .set('Authorization', 'Bearer key-acme-aaaaaaaa')
      .set(IDENTITY_HEADER, forged)
      .set('traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ subject: 'acme', path: '/v1/vision/tasks/t1' });
    const last = up.seen[up.seen.length - 1];
    expect(last.headers.authorization).toBeUndefined();
    expect(last.headers[IDENTITY_HEADER]).not.toBe(forged);
    expect(last.headers.traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    expect(last.headers['x-request-id']).toBe(res.headers['x-request-id']);
  });

  it('a forged identity header sent straight to a service does not reach another subject', async () => {
    const forged = signIdentity(
      { issuer: 'gateway', key: generateKeyPairSync('ed25519').privateKey },
      { subject: 'acme', requestId: 'x' },
      'tasks',
      { method: 'GET', target: '/v1/vision/tasks/t1' },
    );
    const res = await request(up.url).get('/v1/vision/tasks/t1').set(IDENTITY_HEADER, forged);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('OP-AUTH-REQUIRED');
    const unsigned = await request(up.url)
      .get('/v1/vision/tasks/t1')
      .set(IDENTITY_HEADER, 'eyJzdWIiOiJhY21lIn0.');
    expect(unsigned.status).toBe(401);
  });

  it('accepts a client X-Request-Id and echoes it in the body of errors', async () => {
    const res = await request(gw.url).get('/v1/vision/tasks').set('X-Request-Id', 'client-chosen-id-123');
    expect(res.status).toBe(401);
    expect(res.headers['x-request-id']).toBe('client-chosen-id-123');
    expect(res.body.error.request_id).toBe('client-chosen-id-123');
  });

  it('gives a JSON 404 for unknown routes once authenticated', async () => {
    const res = await request(gw.url).get('/nope').set('Authorization', 'Bearer key-acme-aaaaaaaa');
    expect(res.status).toBe(404);
    expect(res.body.error.request_id).toBeDefined();
  });

  it('refuses a path with a backslash or a dot segment, raw or percent-encoded, with 400 before routing', async () => {
    // Sent raw (node:http): URL-parsing clients would normalise these away before they leave.
    const raw = (path: string, key?: string) =>
      new Promise<{ status: number; body: { error?: { code: string; details?: { reason?: string } } } }>(
        (resolve, reject) => {
          const u = new URL(gw.url);
          const req = http.request(
            {
              host: u.hostname,
              port: u.port,
              path,
              method: 'GET',
              headers: key ? { authorization: `Bearer ${key}` } : {},
            },
            (res) => {
              let text = '';
              res.setEncoding('utf8');
              res.on('data', (c: string) => (text += c));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
            },
          );
          req.on('error', reject);
          req.end();
        },
      );
    const before = up.hits;
    for (const path of [
      '/v1/vision/tasks/..%2F..%2Fquota',
      '/v1/vision/tasks/../quota',
      '/v1/vision/./quota',
      '/v1/vision/%2E%2E/vision/quota',
      '/v1/vision/tasks/%2e/t1',
      '/v1\\vision\\quota',
      '/v1/vision/tasks%5Ct1',
      '/v1/vision/tasks/t1%5c..%5cresults',
    ]) {
      for (const key of ['key-acme-aaaaaaaa', undefined]) {
        const res = await raw(path, key);
        expect({ path, status: res.status }).toEqual({ path, status: 400 });
        expect(res.body.error).toMatchObject({
          code: 'OP-TASK-REQUEST-INVALID',
          details: { reason: 'invalid_path' },
        });
      }
    }
    expect(up.hits).toBe(before);
    // Dots inside a segment are ordinary characters.
    expect((await raw('/v1/vision/tasks/t1..x', 'key-acme-aaaaaaaa')).status).toBe(200);
  });

  it('answers 503 OP-SYS-UNAVAILABLE when the upstream cannot be reached', async () => {
    const res = await request(gw.url)
      .post('/v1/vision/image-detections')
      .set('Authorization', 'Bearer key-acme-aaaaaaaa')
      .attach('files', Buffer.from('x'), 'a.jpg');
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('OP-SYS-UNAVAILABLE');
    expect(res.headers['retry-after']).toBe('1');
    assertMatchesOpenApi(
      'post',
      '/v1/vision/image-detections',
      res.status,
      res.headers['content-type'],
      res.body,
    );
  });

  it('refuses an image body over 81 MiB by Content-Length before touching the upstream', async () => {
    const before = up.hits;
    const res = await new Promise<{
      status: number;
      body: { error: { code: string; details: { reason: string } } };
    }>((resolve, reject) => {
      const req = http.request(`${gw.url}/v1/vision/video-tasks`, {
        method: 'POST',
        headers: {
          Authorization: 'Bearer key-acme-aaaaaaaa',
          'Content-Type': 'multipart/form-data; boundary=x',
          'Content-Length': String(600 * 1000 * 1000),
        },
      });
      req.on('response', (r) => {
        let data = '';
        r.on('data', (c: Buffer) => (data += c.toString()));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body: JSON.parse(data) }));
      });
      req.on('error', reject);
      req.write(Buffer.alloc(1024));
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('OP-TASK-REQUEST-INVALID');
    expect(res.body.error.details.reason).toBe('body_too_large');
    expect(up.hits).toBe(before);
  });

  it('cuts off a chunked body that grows past the cap and answers 400', async () => {
    const res = await new Promise<{ status: number; body: { error?: { details?: { reason?: string } } } }>(
      (resolve, reject) => {
        const req = http.request(`${gw.url}/v1/vision/tasks`, {
          method: 'POST',
          headers: { Authorization: 'Bearer key-acme-aaaaaaaa', 'Content-Type': 'application/json' },
        });
        req.on('response', (r) => {
          let data = '';
          r.on('data', (c: Buffer) => (data += c.toString()));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body: JSON.parse(data) }));
        });
        req.on('error', reject);
        // No Content-Length: node sends it chunked, 2 MiB against a 1 MiB cap.
        for (let i = 0; i < 32; i++) req.write(Buffer.alloc(64 * 1024, 0x20));
        req.end();
      },
    );
    expect(res.status).toBe(400);
    expect(res.body.error?.details?.reason).toBe('body_too_large');
  });

  it('limits QPS per subject with Retry-After, shared by all keys of the subject, and recovers', async () => {
    // subject "limited": 1/s sustained with a burst of 2.
    const statuses: number[] = [];
    let retryAfter: string | undefined;
    const qpsBefore = await counted(metrics.rateLimited, { reason: 'qps' });
    for (let i = 0; i < 6; i++) {
      const key = i % 2 === 0 ? 'key-limited-dddddddd' : 'key-limited-dddddddd';
      const res = await request(gw.url).get('/v1/vision/quota').set('Authorization', `Bearer ${key}`);
      statuses.push(res.status);
      if (res.status === 429) {
        expect(res.body.error.code).toBe('OP-QUOTA-RATE-LIMITED');
        retryAfter = res.headers['retry-after'];
        assertMatchesOpenApi('get', '/v1/vision/quota', 429, res.headers['content-type'], res.body);
      }
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect((await counted(metrics.rateLimited, { reason: 'qps' })) - qpsBefore).toBe(
      statuses.filter((s) => s === 429).length,
    );
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    // Another subject is not affected.
    expect(
      (await request(gw.url).get('/v1/vision/quota').set('Authorization', 'Bearer key-other-cccccccc'))
        .status,
    ).toBe(200);
    await new Promise((r) => setTimeout(r, Number(retryAfter) * 1000 + 100));
    expect(
      (await request(gw.url).get('/v1/vision/quota').set('Authorization', 'Bearer key-limited-dddddddd'))
        .status,
    ).toBe(200);
  });

  it('two keys of one subject share the QPS limit', async () => {
    const shared = await start({
      env: {
        VISION_DATA_DIR: ':memory:',
        VISION_IDENTITY_DIR: identityDir(),
        LOG_LEVEL: 'silent',
        VISION_API_KEYS: 'key-one-aaaaaaaa:team,key-two-bbbbbbbb:team',
        GATEWAY_QPS: '0.1',
        GATEWAY_BURST: '3',
        QUOTA_URL: up.url,
      },
      port: 0,
      host: '127.0.0.1',
      logger,
    });
    try {
      const codes: number[] = [];
      for (let i = 0; i < 8; i++) {
        const key = i % 2 === 0 ? 'key-one-aaaaaaaa' : 'key-two-bbbbbbbb';
        codes.push(
          (await request(shared.url).get('/v1/vision/quota').set('Authorization', `Bearer ${key}`)).status,
        );
      }
      const ok = codes.filter((c) => c === 200).length;
      // Per key the limit would allow both keys their own burst; shared, the subject gets one budget.
      expect(ok).toBeLessThanOrEqual(4);
      expect(codes.filter((c) => c === 429).length).toBeGreaterThanOrEqual(4);
    } finally {
      await shared.close();
    }
  });

  it('limits concurrent in-flight requests per subject', async () => {
    let release!: () => void;
    up.hold = new Promise<void>((r) => (release = r));
    // supertest requests are lazy: .then() sends them now.
    const inflight = [0, 1].map(() =>
      request(gw.url)
        .get('/v1/vision/tasks/slow')
        .set('Authorization', 'Bearer key-conc-eeeeeeee')
        .then((r) => r),
    );
    while (up.seen.filter((x) => x.subject === 'conc').length < 2)
      await new Promise((r) => setTimeout(r, 20));
    const concurrencyBefore = await counted(metrics.rateLimited, { reason: 'concurrency' });
    const third = await request(gw.url)
      .get('/v1/vision/tasks/slow')
      .set('Authorization', 'Bearer key-conc-eeeeeeee');
    expect(third.status).toBe(429);
    expect(third.body.error.details.limit).toBe('concurrency');
    expect((await counted(metrics.rateLimited, { reason: 'concurrency' })) - concurrencyBefore).toBe(1);
    release();
    up.hold = undefined;
    const done = await Promise.all(inflight);
    expect(done.map((d) => d.status)).toEqual([200, 200]);
  });

  it('streams a large upload through with bounded gateway memory', async () => {
    const total = 512 * 1000 * 1000;
    const chunk = Buffer.alloc(1024 * 1024, 7);
    let sent = 0;
    const body = new Readable({
      read() {
        if (sent >= total) return this.push(null);
        const n = Math.min(chunk.length, total - sent);
        sent += n;
        this.push(n === chunk.length ? chunk : chunk.subarray(0, n));
      },
    });
    global.gc?.();
    const base = process.memoryUsage().rss;
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const res = await new Promise<{ status: number; body: { bytes: number } }>((resolve, reject) => {
      const req = http.request(`${gw.url}/v1/vision/video-tasks`, {
        method: 'POST',
        headers: { Authorization: 'Bearer key-acme-aaaaaaaa', 'Content-Type': 'application/octet-stream' },
      });
      req.on('response', (r) => {
        let data = '';
        r.on('data', (c: Buffer) => (data += c.toString()));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body: JSON.parse(data) }));
      });
      req.on('error', reject);
      body.pipe(req);
    });
    clearInterval(sampler);
    expect(res.status).toBe(201);
    expect(res.body.bytes).toBe(total);
    // Client, gateway and upstream share this process: 512 MB passed through, memory grew far less.
    expect(peak - base).toBeLessThan(150 * 1024 * 1024);
  }, 120_000);
});

export type { RunningService };
