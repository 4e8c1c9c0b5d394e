/**
 * Stream URLs with user information (SPEC.md 4.1): the SSRF guard's own request cannot carry them in
 * the URL (fetch refuses it), so they travel as `Authorization: Basic`; ffprobe and the backend get the
 * full URL; nothing the caller sees and no log line contains them.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createLogger, REASON } from '@vision/shared';
import { plainUrlFingerprintOf } from '../src/domain/fingerprint';
import { parseStreamUrl } from '../src/domain/stream-url';
import { guardStreamUrl, percentDecode } from '../src/probe/stream-guard';
import { plantCreate } from './fakes';
import { MEDIA, type Stack, startStack } from './harness';

const USER = 'cam-user';
const PASS = 'Sup3rSecretPw';
const CLIP = 'person_bicycle_car_parkinglot_intel.mp4';

/** A camera that wants Basic auth: 401 with a challenge without the right credentials. */
async function startAuthClipServer(expected: string) {
  const seen: (string | undefined)[] = [];
  const server: Server = http.createServer((req, res) => {
    seen.push(req.headers.authorization);
    if (req.headers.authorization !== `Basic ${Buffer.from(expected).toString('base64')}`) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="camera"' });
      return void res.end();
    }
    const file = path.join(MEDIA, 'videos', CLIP);
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': statSync(file).size });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    seen,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let stack: Stack;
let camera: Awaited<ReturnType<typeof startAuthClipServer>>;
const logs: string[] = [];

beforeAll(async () => {
  camera = await startAuthClipServer(`${USER}:${PASS}`);
  const logger = createLogger('tasks-test', {
    level: 'debug',
    destination: { write: (line: string) => void logs.push(line) },
  });
  stack = await startStack({ logger });
});
afterAll(async () => {
  await stack.close();
  await camera.close();
});

test('an http stream URL with user:pass@ reaches the probe and creates the task; the credentials stay hidden', async () => {
  const streamUrl = `http://${USER}:${PASS}@127.0.0.1:${camera.port}/${CLIP}`;
  const r = await stack.http
    .post('/v1/vision/tasks')
    .use(stack.as('alice'))
    .set('Idempotency-Key', randomUUID())
    .send({ scene_code: 'person_vehicle', stream_url: streamUrl });
  expect(r.status).toBe(201);
  expect(r.body.status).toBe('running');
  // The backend gets the full URL: it needs the credentials.
  expect(stack.inference.jobs.get(r.body.task_id)?.source).toEqual({ type: 'stream', url: streamUrl });
  // The guard's request authenticated with Basic (no request went out with the URL's user info inside).
  expect(camera.seen).toContain(`Basic ${Buffer.from(`${USER}:${PASS}`).toString('base64')}`);

  const got = await stack.http.get(`/v1/vision/tasks/${r.body.task_id}`).use(stack.as('alice'));
  const list = await stack.http.get('/v1/vision/tasks').use(stack.as('alice'));
  const token = Buffer.from(`${USER}:${PASS}`).toString('base64');
  for (const text of [JSON.stringify(r.body), JSON.stringify(r.headers), got.text, list.text]) {
    expect(text).not.toContain(PASS);
    expect(text).not.toContain(token);
  }
  // The stored row holds the URL sealed: neither the password nor the user name is in any column.
  const row = JSON.stringify(await stack.tasks.db.knex('tasks').where({ task_id: r.body.task_id }).first());
  expect(row).not.toContain(PASS);
  expect(row).not.toContain(USER);
  expect(logs.length).toBeGreaterThan(0);
  const captured = logs.join('');
  expect(captured).not.toContain(PASS);
  expect(captured).not.toContain(token);
});

test('wrong credentials are refused as stream_unreachable without echoing them', async () => {
  const r = await stack.http
    .post('/v1/vision/tasks')
    .use(stack.as('bob'))
    .set('Idempotency-Key', randomUUID())
    .send({
      scene_code: 'person_vehicle',
      stream_url: `http://${USER}:WrongPassword9@127.0.0.1:${camera.port}/${CLIP}`,
    });
  expect(r.status).toBe(400);
  expect(r.body.error.details.reason).toBe(REASON.stream_unreachable);
  expect(r.text).not.toContain('WrongPassword9');
  expect(logs.join('')).not.toContain('WrongPassword9');
});

test('the guard sends percent-encoded user information decoded, as Basic credentials', async () => {
  const raw = 'us@er:p:ss/wörd%zz';
  const special = await startAuthClipServer(raw);
  try {
    const parsed = parseStreamUrl(`http://us%40er:p%3Ass%2Fw%C3%B6rd%zz@127.0.0.1:${special.port}/${CLIP}`);
    if (!parsed.ok) throw new Error(parsed.problem);
    const g = await guardStreamUrl(parsed.url, { allowPrivate: true, timeoutMs: 3000 });
    expect(g).toMatchObject({ ok: true });
    if (g.ok) expect(g.url.href).toBe(parsed.url.href); // ffprobe still gets the full URL
    expect(special.seen).toEqual([`Basic ${Buffer.from(raw, 'utf8').toString('base64')}`]);
  } finally {
    await special.close();
  }
  expect(percentDecode('a%2Fb%zz%4')).toBe('a/b%zz%4');
});

test("the create claim stores the URL's keyed digest, not a hash of the URL; a claim stored with the plain-URL fingerprint still replays", async () => {
  const streamUrl = `http://${USER}:${PASS}@127.0.0.1:${camera.port}/${CLIP}`;
  const plain = plainUrlFingerprintOf({ scene_code: 'person_vehicle', stream_url: streamUrl });
  const create = (key: string) =>
    stack.http
      .post('/v1/vision/tasks')
      .use(stack.as('carol'))
      .set('Idempotency-Key', key)
      .send({ scene_code: 'person_vehicle', stream_url: streamUrl });

  const key = randomUUID();
  const first = await create(key);
  expect(first.status).toBe(201);
  const stored = await stack.tasks.store.claims.get('carol', key);
  // A stolen row cannot be tried against guessed passwords: the stored value is neither the plain-URL hash
  // nor anything computable without the service's key.
  expect(stored?.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  expect(stored?.fingerprint).not.toBe(plain);
  const again = await create(key);
  expect({ status: again.status, task: again.body.task_id }).toEqual({
    status: 200,
    task: first.body.task_id,
  });

  // A claim written by a replica that still fingerprinted the plain URL (a rolling upgrade), whose process
  // died after writing its task: the same request finishes and replays it, no idempotency_mismatch.
  const earlierKey = randomUUID();
  const earlierTask = await plantCreate(
    stack.tasks.store,
    {
      subject: 'carol',
      scene_code: 'person_vehicle',
      business_threshold: 0.5,
      lower_bound: 0.3,
      source_type: 'stream',
      stream_url: streamUrl,
      stream_url_redacted: 'http://127.0.0.1/',
      retention_days: 90,
    },
    { key: earlierKey, fingerprint: plain, leaseUntil: new Date() },
  );
  const replay = await create(earlierKey);
  expect({ status: replay.status, task: replay.body.task_id }).toEqual({ status: 200, task: earlierTask });
});
