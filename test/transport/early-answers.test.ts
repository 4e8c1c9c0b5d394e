import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { VisionApiError, VisionClient } from '@vision/sdk';
import { IMAGE_UPLOAD } from '@vision/shared';
import { IMAGE_BODY_LIMIT, VIDEO_BODY_LIMIT } from '../../services/gateway/src/domain/routes';
import { standaloneOnly } from '../helpers/composition';
import { MEDIA } from '../helpers/stack';
import { storedObjects } from '../helpers/stored-objects';
import { curlUpload, fetchUpload, pythonUpload, sdkUpload, type Read, type Upload } from './clients';
import { openTemporaryFiles } from './processes';
import { eventually, head, imageForm, rawClient, serving, transportStack } from './support';

const KEY = 'transport-early-0123456789';
const IMAGES = '/v1/vision/image-detections';
const VIDEO = '/v1/vision/video-tasks';
const IDLE_MS = 1500;
const MiB = 1024 * 1024;
const run = promisify(execFile);
/** The gateway refuses a declared length over the route's limit on the head, before it forwards anything. */
const atTheGateway = standaloneOnly('the gateway answers before it forwards anything');

// The largest image upload the endpoint takes (ten images of 8 MiB: 80 MiB of its 81 MiB limit), and
// a video of 128 MiB: a quarter of the 512 MB limit, sent by each client in turn; the raw client below
// sends the whole 512 MB. Sending and discarding 512 MB for each of four clients would add about a minute.
const IMAGES_AT_LIMIT = { size: IMAGE_UPLOAD.maxFileBytes, count: IMAGE_UPLOAD.maxFiles };
const LARGE_VIDEO = { size: 128 * MiB, count: 1 };
const CLIENTS: Record<string, (u: Upload) => Promise<Read>> = {
  curl: curlUpload,
  'Node fetch (a stream from a generator)': fetchUpload,
  'Python requests': pythonUpload,
  'the SDK': sdkUpload,
};
/** Refusals given on the first bytes of an upload: what is sent, and what each client must read. */
const REFUSALS: Array<[string, 'images' | 'video', { idem: string; fields: Record<string, string> }, Read]> =
  [
    [
      'a bad Idempotency-Key',
      'images',
      { idem: 'abc', fields: { scene_code: 'person_vehicle' } },
      { status: 400, code: 'OP-TASK-REQUEST-INVALID', reason: 'idempotency_key' },
    ],
    [
      'a bad Idempotency-Key',
      'video',
      { idem: 'abc', fields: { scene_code: 'person_vehicle' } },
      { status: 400, code: 'OP-TASK-REQUEST-INVALID', reason: 'idempotency_key' },
    ],
    [
      'an unknown form field',
      'images',
      { idem: randomUUID(), fields: { colour: 'red', scene_code: 'person_vehicle' } },
      { status: 400, code: 'OP-TASK-REQUEST-INVALID', reason: 'unknown_field' },
    ],
    [
      'an unknown scene_code',
      'video',
      { idem: randomUUID(), fields: { scene_code: 'no_such_scene' } },
      { status: 400, code: 'OP-TASK-SCENE-UNAVAILABLE', reason: 'unknown_scene' },
    ],
    [
      'an unknown scene_code',
      'images',
      { idem: randomUUID(), fields: { scene_code: 'no_such_scene' } },
      { status: 400, code: 'OP-TASK-SCENE-UNAVAILABLE', reason: 'unknown_scene' },
    ],
    [
      'an unknown form field',
      'video',
      { idem: randomUUID(), fields: { colour: 'red', scene_code: 'person_vehicle' } },
      { status: 400, code: 'OP-TASK-REQUEST-INVALID', reason: 'unknown_field' },
    ],
  ];

/**
 * A refusal given before the request's body has all arrived reaches every kind of client as that
 * refusal: the spec's code and reason, never a reset, never a 503, and the service keeps serving.
 */
describe('transport: early answers reach the client', () => {
  // Whatever each case does, the service still serves and nothing is charged or held.
  const stack = transportStack(KEY, 'transport-early', { GATEWAY_UPLOAD_IDLE_MS: String(IDLE_MS) });
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'transport-early-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const sixMb = () => imageForm(6_000_000, 'person_vehicle');

  it('Node fetch (undici) reads the 400 of a bad Idempotency-Key on a 6 MB image', async () => {
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append('files', new Blob([Buffer.alloc(6_000_000, 1)], { type: 'image/jpeg' }), 'a.jpg');
    const res = await fetch(`${stack().url}${IMAGES}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'idempotency-key': 'abc' },
      body: form,
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; details: { reason: string } } };
    expect(body.error.code).toBe('OP-TASK-REQUEST-INVALID');
    expect(body.error.details.reason).toBe('idempotency_key');
  });

  it('the SDK reads the same 400 as a typed error', async () => {
    const client = new VisionClient({ baseUrl: stack().url, apiKey: KEY, retry: { retries: 0 } });
    const err = await client
      .detectImages([Buffer.alloc(6_000_000, 1)], { idempotencyKey: 'abc', scene: 'person_vehicle' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VisionApiError);
    expect((err as VisionApiError).status).toBe(400);
    expect((err as VisionApiError).reason).toBe('idempotency_key');
  });

  it('curl reads it (it stops sending when the answer comes)', async () => {
    const file = path.join(dir, 'six.jpg');
    writeFileSync(file, Buffer.alloc(6_000_000, 1));
    const { stdout } = await run('curl', [
      '-sS',
      '-H',
      `Authorization: Bearer ${KEY}`,
      '-H',
      'Idempotency-Key: abc',
      '-F',
      'scene_code=person_vehicle',
      '-F',
      `files=@${file};type=image/jpeg`,
      '-w',
      '\n%{http_code}',
      `${stack().url}${IMAGES}`,
    ]);
    const [body, code] = stdout.trim().split('\n');
    expect(code).toBe('400');
    expect(JSON.parse(body).error.details.reason).toBe('idempotency_key');
  });

  it('Python requests reads it (it sends the whole body before it reads)', async () => {
    const script = [
      'import json, sys, requests',
      "files = {'files': ('a.jpg', b'\\x01' * 6000000, 'image/jpeg')}",
      "r = requests.post(sys.argv[1], headers={'Authorization': 'Bearer ' + sys.argv[2], 'Idempotency-Key': 'abc'},",
      "                  data={'scene_code': 'person_vehicle'}, files=files, timeout=60)",
      "print(r.status_code, r.json()['error']['details']['reason'])",
    ].join('\n');
    const { stdout } = await run('python3', ['-c', script, `${stack().url}${IMAGES}`, KEY]);
    expect(stdout.trim()).toBe('400 idempotency_key');
  });

  /** A file of `size` bytes: a real `kind` file's first bytes, then a sparse run of zeros (no disk). */
  const padded = (kind: 'images' | 'video', size: number): string => {
    const file = path.join(dir, `${kind}-${size}.bin`);
    const real =
      kind === 'images'
        ? 'images/street_bus_pedestrians_coco2006.jpg'
        : 'videos/pedestrians_vtest_opencv.mp4';
    writeFileSync(file, readFileSync(path.join(MEDIA, real)).subarray(0, 64 * 1024));
    truncateSync(file, size);
    return file;
  };

  // Every kind of client reads each refusal at the largest sizes, images and video alike. (The SDK
  // sends only the fields the API knows, so it has no unknown field to send.)
  const matrix = REFUSALS.flatMap(([what, kind, sent, expected]) =>
    Object.keys(CLIENTS)
      .filter((client) => !(client === 'the SDK' && Object.keys(sent.fields).some((f) => f !== 'scene_code')))
      .map((client) => [client, what, kind, sent, expected] as const),
  );
  it.each(matrix)(
    '%s reads the refusal of %s on the %s endpoint at the largest size',
    async (client, _what, kind, sent, expected) => {
      const { size, count } = kind === 'images' ? IMAGES_AT_LIMIT : LARGE_VIDEO;
      const read = await CLIENTS[client]({
        base: stack().url,
        route: kind === 'images' ? IMAGES : VIDEO,
        key: KEY,
        idempotencyKey: sent.idem,
        fields: sent.fields,
        fileField: kind === 'images' ? 'files' : 'file',
        path: padded(kind, size),
        size,
        count,
      });
      expect(read).toMatchObject(expected);
      expect(read.code).not.toBe('OP-SYS-UNAVAILABLE');
    },
    120_000,
  );

  // A client that sends everything, then reads, at each size up to the endpoint's limit; the
  // connection is kept alive afterwards and serves the next request.
  it.each([
    ['images', IMAGES, 1024],
    ['images', IMAGES, 6_000_000],
    ['images', IMAGES, IMAGE_BODY_LIMIT - 4096],
    ['video', VIDEO, 3_000_000],
    ['video', VIDEO, VIDEO_BODY_LIMIT - 4096],
  ])(
    'a raw client sending a %s body to %s of %d bytes whole, then reading, gets the 400 and keeps its connection',
    async (_kind, route, size) => {
      const c = await rawClient(stack().url);
      const { contentType } = imageForm(0);
      await c.write(
        head(route, {
          authorization: `Bearer ${KEY}`,
          'idempotency-key': 'abc',
          'content-type': contentType,
          'content-length': size,
        }),
      );
      const chunk = Buffer.alloc(1024 * 1024, 0x41);
      for (let sent = 0; sent < size; sent += chunk.length) {
        const ok = await c.write(sent + chunk.length <= size ? chunk : chunk.subarray(0, size - sent));
        expect(ok).toBe(true);
      }
      const a = await c.answer();
      expect(a.status).toBe(400);
      expect(JSON.parse(a.body).error.details.reason).toBe('idempotency_key');
      expect(a.ended).toBe('open');
      await c.write(`GET /api/op/v1/scenes HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${KEY}\r\n\r\n`);
      expect(await c.statuses(2)).toEqual([400, 200]);
      c.socket.destroy();
    },
    240_000,
  );

  it('an upstream refusal (unknown scene) is relayed as that refusal, not as 503', async () => {
    const { contentType, body } = imageForm(6_000_000, 'no_such_scene');
    const c = await rawClient(stack().url);
    await c.write(
      head(IMAGES, {
        authorization: `Bearer ${KEY}`,
        'idempotency-key': randomUUID(),
        'content-type': contentType,
        'content-length': body.length,
      }),
    );
    await c.write(body);
    const a = await c.answer();
    expect(a.status).toBe(400);
    expect(JSON.parse(a.body).error.code).not.toBe('OP-SYS-UNAVAILABLE');
    c.socket.destroy();
  });

  it('a client that sends a bad header and part of a body, then stalls, gets the 400 and a closed connection; the service lives on', async () => {
    const { contentType, body } = sixMb();
    const c = await rawClient(stack().url);
    await c.write(
      head(IMAGES, {
        authorization: `Bearer ${KEY}`,
        'idempotency-key': 'abc',
        'content-type': contentType,
        'content-length': body.length,
      }),
    );
    await c.write(body.subarray(0, 1_000_000));
    const a = await c.answer();
    expect(a.status).toBe(400);
    expect(JSON.parse(a.body).error.details.reason).toBe('idempotency_key');
    // The idle cut (IDLE_MS without a byte) closes it, and nothing threw on the way; the linger after a cut is
    // observed in malformed-clients.test.ts.
    const closed = () => c.socket.readableEnded || c.socket.destroyed;
    expect(await eventually(closed, (v) => v, 25_000)).toBe(true);
    expect(await serving(stack(), KEY)).toBe(true);
  }, 30_000);

  atTheGateway.it(
    'a declared body over the limit is refused at once; a client reading while it sends reads the 400',
    async () => {
      const c = await rawClient(stack().url);
      await c.write(
        head(IMAGES, {
          authorization: `Bearer ${KEY}`,
          'idempotency-key': randomUUID(),
          'content-type': 'multipart/form-data; boundary=x',
          'content-length': IMAGE_BODY_LIMIT + 10,
        }),
      );
      const a = await c.answer();
      expect(a.status).toBe(400);
      expect(JSON.parse(a.body).error.details.reason).toBe('body_too_large');
      c.socket.destroy();
    },
  );

  // Last: the refusals above stored nothing (the video endpoint stores an upload before it checks the
  // scene, and deletes it when the scene is refused) and left no temporary file open.
  it('no refusal left a stored object or an open temporary file behind', async () => {
    expect(
      await eventually(
        () => storedObjects(stack()),
        (o) => o.length === 0,
      ),
    ).toEqual([]);
    expect(
      await eventually(
        () => openTemporaryFiles(stack()),
        (f) => f.length === 0,
      ),
    ).toEqual([]);
  });
});
