/** @jest-environment ./services/inference/test/support/onnx-environment.js */
import { IMAGE_UPLOAD, REASON } from '@vision/shared';
import { pngDeclaring, pngOfSize } from '../../../test/helpers/png-pad';
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import request from 'supertest';
import { IDENTITY_HEADER, identityHeader, imagesQuotaOf, media, startStack, type Stack } from './harness';
import { keepClearOfQuotaDayTurn } from '../../../test/helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

jest.setTimeout(120_000);

const MiB = 1024 * 1024;
const PATH = '/v1/vision/image-detections';
const JPG = 'sheep_coco5992.jpg';
const PNG = 'boat_sailboat_kodim06.png';
const WEBP = 'none_brick_facade_kodim01.webp';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

/** `key` null sends no Idempotency-Key. */
function post(subject: string, key: string | null = randomUUID()) {
  const r = request(stack.images.url).post(PATH).set(IDENTITY_HEADER, identityHeader(subject));
  return key === null ? r : r.set('Idempotency-Key', key);
}

function attachAll(r: request.Test, names: string[]): request.Test {
  for (const n of names) r = r.attach('files', media(n), n);
  return r;
}

const quotaOf = (subject: string) => imagesQuotaOf(stack, subject);

/** The seqs of the images of a task that are in object storage, whatever their day and type. */
async function storedSeqs(taskId: string): Promise<number[]> {
  const all = await stack.store.listOlderThan('images/', new Date(Date.now() + 86_400_000), 10_000);
  return all
    .filter((o) => o.key.split('/')[2] === taskId)
    .map((o) => Number(o.key.split('/')[3].split('.')[0]))
    .sort((a, b) => a - b);
}

/** Images in object storage, whatever their task. */
async function storedCount(): Promise<number> {
  return (await stack.store.listOlderThan('images/', new Date(Date.now() + 86_400_000), 10_000)).length;
}

function expectInvalid(r: request.Response, reason: string) {
  expect(r.status).toBe(400);
  expect(r.body.error.code).toBe('OP-TASK-REQUEST-INVALID');
  expect(r.body.error.details.reason).toBe(reason);
}

describe('successful call', () => {
  it('answers 201 with per-image results in upload order, relays images, writes the task record and charges', async () => {
    const subject = 'alice';
    const key = randomUUID();
    const names = [JPG, 'cattle_cameratrap_crop.jpg', PNG, WEBP];
    const r = await attachAll(post(subject, key).field('scene_code', 'cow_sheep'), names);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ request_id: key, status: 'succeeded' });
    expect(r.body.replayed).toBeUndefined();
    const taskId = r.body.task_id as string;
    expect(r.body.results.map((x: { seq: number }) => x.seq)).toEqual([0, 1, 2, 3]);
    for (const entry of r.body.results) {
      expect(entry.status).toBe('succeeded');
      for (const o of entry.objects) {
        expect(o).not.toHaveProperty('track_id');
        expect(o.bbox.format).toBe('cxcywh_normalized');
      }
    }
    // Real detections: sheep in the first image, cattle in the second (PROVENANCE.md).
    expect(r.body.results[0].objects.length).toBeGreaterThanOrEqual(3);
    expect(r.body.results[1].objects.length).toBeGreaterThanOrEqual(1);
    // Images were relayed under keys the service made.
    const day = new Date().toISOString().slice(0, 10);
    const stored = await stack.store.stat(`images/${day}/${taskId}/2.png`);
    expect(stored?.size).toBe(media(PNG).length);
    // The task record exists, for this subject.
    await stack.recorded();
    expect(stack.tasks.records.get(taskId)).toMatchObject({
      subject,
      body: {
        task_id: taskId,
        request_id: key,
        scene_code: 'cow_sheep',
        status: 'succeeded',
        results_summary: { images: 4, succeeded: 4, failed: 0 },
      },
    });
    const q = await quotaOf(subject);
    expect(q.used).toBe(4);
    expect(q.held).toBe(0);
  });

  it('defaults the scene to fire_smoke', async () => {
    const r = await attachAll(post('bob'), [JPG]);
    expect(r.status).toBe(201);
    await stack.recorded();
    expect(stack.tasks.records.get(r.body.task_id)?.body.scene_code).toBe('fire_smoke');
  });
});

describe('request validation', () => {
  it('requires a UUID Idempotency-Key', async () => {
    expectInvalid(await attachAll(post('val', null), [JPG]), REASON.idempotency_key);
    expectInvalid(await attachAll(post('val', 'not-a-uuid'), [JPG]), REASON.idempotency_key);
  });

  it('accepts only the file field "files" and the value field "scene_code"', async () => {
    let r = await post('val').attach('file', media(JPG), JPG);
    expectInvalid(r, REASON.unknown_field);
    expect(r.body.error.details.field).toBe('file');
    r = await attachAll(post('val').field('threshold', '0.5'), [JPG]);
    expectInvalid(r, REASON.unknown_field);
    expect(r.body.error.details.field).toBe('threshold');
    r = await attachAll(post('val').field('scene_code', 'ship').field('scene_code', 'ship'), [JPG]);
    expectInvalid(r, REASON.duplicate_field);
    expect((await quotaOf('val')).used).toBe(0);
  });

  it('refuses 0 and 11 files', async () => {
    expectInvalid(await post('val').field('scene_code', 'ship'), REASON.file_missing);
    const eleven = Array.from({ length: 11 }, () => JPG);
    expectInvalid(await attachAll(post('val'), eleven), REASON.too_many_files);
    expect((await quotaOf('val')).used).toBe(0);
  });

  it('refuses a 9 MiB image', async () => {
    // A real JPEG padded after its end marker: still a JPEG, now 9 MiB.
    const jpg = media(JPG);
    const big = Buffer.concat([jpg, Buffer.alloc(9 * MiB - jpg.length, 0)]);
    const r = await post('val').attach('files', big, 'big.jpg');
    expectInvalid(r, REASON.file_too_large);
  });

  it('an image of exactly 8 MiB is detected; 8 MiB + 1 byte is refused (SPEC.md 4.6)', async () => {
    // A real PNG grown with a private ancillary chunk: still a valid PNG, decoded by the real inference.
    const exact = pngOfSize(media(PNG), IMAGE_UPLOAD.maxFileBytes);
    expect(exact.length).toBe(8 * MiB);
    const ok = await post('val8').attach('files', exact, 'max.png');
    expect(ok.status).toBe(201);
    expect(ok.body.results).toEqual([{ seq: 0, status: 'succeeded', objects: expect.any(Array) }]);
    const over = await post('val8').attach('files', pngOfSize(media(PNG), 8 * MiB + 1), 'over.png');
    expectInvalid(over, REASON.file_too_large);
    expect((await quotaOf('val8')).used).toBe(1);
  });

  it('a body that is not multipart: reason not_multipart, nothing charged', async () => {
    const r = await post('val').set('Content-Type', 'application/json').send('{"files":[]}');
    expectInvalid(r, REASON.not_multipart);
  });

  it('recognises types by content: a GIF and a text file named .jpg are refused', async () => {
    const gif = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
    let r = await post('val').attach('files', gif, { filename: 'pixel.gif', contentType: 'image/gif' });
    expectInvalid(r, REASON.unsupported_type);
    r = await attachAll(post('val'), [JPG]).attach('files', Buffer.from('just some text, honestly\n'), {
      filename: 'photo.jpg',
      contentType: 'image/jpeg',
    });
    expectInvalid(r, REASON.unsupported_type);
    expect(r.body.error.details.seq).toBe(1);
    expect((await quotaOf('val')).used).toBe(0);
  });

  it('caps decoded pixels (decompression bombs)', async () => {
    const before = { quota: await quotaOf('bomb'), stored: await storedCount() };
    // A 3072 x 1728 photo over the stack's 4 Mpx cap.
    let r = await post('bomb').attach('files', media('fire_small_campfire_person_cameratrap.jpg'), 'big.jpg');
    expectInvalid(r, REASON.too_many_pixels);
    expect(r.body.error.details).toMatchObject({ seq: 0, width: 3072, height: 1728, max_pixels: 4_000_000 });
    // Under 100 bytes that declare 30000 x 30000, after an image that alone would be detected and charged.
    r = await attachAll(post('bomb').field('scene_code', 'cow_sheep'), [JPG]).attach(
      'files',
      pngDeclaring(30_000, 30_000),
      'bomb.png',
    );
    expectInvalid(r, REASON.too_many_pixels);
    expect(r.body.error.details).toMatchObject({ seq: 1, width: 30_000, height: 30_000 });
    expect({ quota: await quotaOf('bomb'), stored: await storedCount() }).toEqual(before);
  });

  it('refuses a body over 81 MiB by its Content-Length, before reading it', async () => {
    const res = await rawPost('val', { 'content-length': String(90 * MiB) }, 0);
    expect(res.status).toBe(400);
    expect(res.body.error.details.reason).toBe(REASON.body_too_large);
  });

  it('refuses a streamed (chunked) body over 81 MiB while reading it', async () => {
    // A multipart preamble is ignored by the parser, so only the byte count can stop it.
    const res = await rawPost('val', {}, 82 * MiB);
    expect(res.status).toBe(400);
    expect(res.body.error.details.reason).toBe(REASON.body_too_large);
    expect(res.sent).toBeLessThan(90 * MiB);
  });
});

/** Streams `preambleBytes` of preamble in 1 MiB chunks until the server answers. */
function rawPost(
  subject: string,
  headers: Record<string, string>,
  preambleBytes: number,
): Promise<{ status: number; body: { error: { details: { reason: string } } }; sent: number }> {
  return new Promise((resolve, reject) => {
    const url = new URL(PATH, stack.images.url);
    const req = http.request(url, {
      method: 'POST',
      headers: {
        'content-type': 'multipart/form-data; boundary=XBOUNDARYX',
        'idempotency-key': randomUUID(),
        [IDENTITY_HEADER]: identityHeader(subject),
        ...headers,
      },
    });
    let sent = 0;
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()), sent });
        req.destroy();
      });
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const chunk = Buffer.alloc(MiB, 0x61);
    const pump = () => {
      while (!answered && sent < preambleBytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!answered && preambleBytes === 0) req.write('--XBOUNDARYX\r\n');
      // Keep the request open: the server must answer without waiting for the end.
    };
    pump();
  });
}

describe('partial failure', () => {
  it('fails only the images whose relay or inference fails, and charges only the successes', async () => {
    const subject = 'partial';
    stack.store.failKeys.push(/\/1\.png$/);
    // A JPEG cut short: right magic bytes, but inference cannot decode it.
    const whole = media('street_people_car_coco9891.jpg');
    const truncated = whole.subarray(0, Math.floor(whole.length / 20));
    try {
      const r = await post(subject)
        .field('scene_code', 'person_vehicle')
        .attach('files', media('street_bus_pedestrians_coco2006.jpg'), 'a.jpg')
        .attach('files', media(PNG), 'b.png')
        .attach('files', truncated, 'c.jpg')
        .attach('files', media(WEBP), 'd.webp');
      expect(r.status).toBe(201);
      expect(r.body.results).toEqual([
        expect.objectContaining({ seq: 0, status: 'succeeded' }),
        { seq: 1, status: 'failed', error_code: 'OP-SYS-UNAVAILABLE' },
        { seq: 2, status: 'failed', error_code: 'OP-TASK-REQUEST-INVALID' },
        expect.objectContaining({ seq: 3, status: 'succeeded' }),
      ]);
      expect(r.body.results[0].objects.length).toBeGreaterThan(0);
      // Only the images that were detected and relayed are stored: never the undecodable one.
      expect(await storedSeqs(r.body.task_id)).toEqual([0, 3]);
      const q = await quotaOf(subject);
      expect(q.used).toBe(2);
      expect(q.held).toBe(0);
      await stack.recorded();
      expect(stack.tasks.records.get(r.body.task_id)?.body.results_summary).toEqual({
        images: 4,
        succeeded: 2,
        failed: 2,
      });
    } finally {
      stack.store.failKeys.length = 0;
    }
  });
});

describe('images that do not decode', () => {
  it('are answered as failed, charge nothing and are never stored (ten 8 MiB random files behind a JPEG signature)', async () => {
    const subject = 'garbage';
    const before = await quotaOf(subject);
    const r = post(subject);
    for (let i = 0; i < 10; i++) {
      const junk = randomBytes(IMAGE_UPLOAD.maxFileBytes);
      junk.set([0xff, 0xd8, 0xff, 0xe0], 0);
      r.attach('files', junk, `junk${i}.jpg`);
    }
    const res = await r;
    expect(res.status).toBe(201);
    expect(res.body.results).toEqual(
      Array.from({ length: 10 }, (_, seq) => ({
        seq,
        status: 'failed',
        error_code: 'OP-TASK-REQUEST-INVALID',
      })),
    );
    expect(await storedSeqs(res.body.task_id)).toEqual([]);
    const after = await quotaOf(subject);
    expect(after.used).toBe(before.used);
    expect(after.held).toBe(0);
    await stack.recorded();
    expect(stack.tasks.records.get(res.body.task_id)?.body.results_summary).toEqual({
      images: 10,
      succeeded: 0,
      failed: 10,
    });
  });
});

describe('idempotency', () => {
  it('replays the original results with 200 and no charge; another scene or other files under the key are refused', async () => {
    const subject = 'replay';
    const key = randomUUID();
    const first = await attachAll(post(subject, key).field('scene_code', 'ship'), [JPG, PNG]);
    expect(first.status).toBe(201);
    const again = await attachAll(post(subject, key).field('scene_code', 'ship'), [JPG, PNG]);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, replayed: true });
    expect((await quotaOf(subject)).used).toBe(2);

    expectInvalid(
      await attachAll(post(subject, key).field('scene_code', 'cow_sheep'), [JPG, PNG]),
      'idempotency_mismatch',
    );
    expectInvalid(
      await attachAll(post(subject, key).field('scene_code', 'ship'), [PNG, JPG]),
      'idempotency_mismatch',
    );
    expectInvalid(
      await attachAll(post(subject, key).field('scene_code', 'ship'), [JPG]),
      'idempotency_mismatch',
    );
    // The key belongs to its subject: another subject with the same key is a new call.
    const other = await attachAll(post('replay-other', key).field('scene_code', 'ship'), [JPG, PNG]);
    expect(other.status).toBe(201);
    expect(other.body.task_id).not.toBe(first.body.task_id);
  });

  it('runs concurrent duplicates once and charges once', async () => {
    const subject = 'dupes';
    const key = randomUUID();
    const rs = await Promise.all(
      Array.from({ length: 5 }, () =>
        attachAll(post(subject, key).field('scene_code', 'ship'), [JPG, PNG, WEBP]),
      ),
    );
    const statuses = rs.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 201]);
    expect(new Set(rs.map((r) => r.body.task_id)).size).toBe(1);
    expect((await quotaOf(subject)).used).toBe(3);
  });
});

describe('quota', () => {
  it('10 concurrent requests of 10 images for a subject with 50 left never charge more than 50', async () => {
    const subject = 'fifty';
    const ten = Array.from({ length: 10 }, (_, i) => [JPG, PNG, WEBP][i % 3]);
    const rs = await Promise.all(
      Array.from({ length: 10 }, () => attachAll(post(subject).field('scene_code', 'ship'), ten)),
    );
    const ok = rs.filter((r) => r.status === 201);
    const refused = rs.filter((r) => r.status === 429);
    expect(ok.length + refused.length).toBe(10);
    for (const r of refused) expect(r.body.error.code).toBe('OP-QUOTA-DAILY-EXHAUSTED');
    const q = await quotaOf(subject);
    expect(q.limit).toBe(50);
    expect(q.used).toBe(ok.length * 10);
    expect(q.used).toBeLessThanOrEqual(50);
    expect(ok.length).toBeGreaterThan(0);
    expect(q.held).toBe(0);
  });

  it('answers 429 when fewer images remain than the request carries', async () => {
    let r = await attachAll(post('none'), [JPG]);
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe('OP-QUOTA-DAILY-EXHAUSTED');
    r = await attachAll(post('fifty'), [JPG]);
    expect(r.status).toBe(429);
  });
});

describe('scenes and breaker', () => {
  it('refuses an unknown scene', async () => {
    const r = await attachAll(post('scenes').field('scene_code', 'volcano'), [JPG]);
    expect(r.body.error.code).toBe('OP-TASK-SCENE-UNAVAILABLE');
    expect((await quotaOf('scenes')).used).toBe(0);
  });

  it('refuses an empty scene_code (only a missing field means the default scene; found by schemathesis)', async () => {
    const r = await attachAll(post('scenes').field('scene_code', ''), [JPG]);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('OP-TASK-SCENE-UNAVAILABLE');
    expect((await quotaOf('scenes')).used).toBe(0);
  });

  it('refuses a scene_code holding a NUL byte before storing anything (found by schemathesis)', async () => {
    const key = randomUUID();
    const r = await attachAll(post('scenes', key).field('scene_code', 'ship\u0000'), [JPG]);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('OP-TASK-SCENE-UNAVAILABLE');
    expect(await stack.images.parts.calls.get('scenes', key)).toBeUndefined();
    expect((await quotaOf('scenes')).used).toBe(0);
  });

  it('answers 503 OP-TASK-BREAKER-OPEN while the breaker is open, and charges nothing', async () => {
    const breaker = stack.images.parts.inference.breaker;
    breaker.open();
    try {
      const key = randomUUID();
      const r = await attachAll(post('breaker', key), [JPG, PNG]);
      expect(r.status).toBe(503);
      expect(r.body.error.code).toBe('OP-TASK-BREAKER-OPEN');
      const q = await quotaOf('breaker');
      expect(q.used).toBe(0);
      expect(q.held).toBe(0);
      breaker.close();
      // The refused call left nothing behind: the same key now runs.
      const again = await attachAll(post('breaker', key), [JPG, PNG]);
      expect(again.status).toBe(201);
    } finally {
      breaker.close();
    }
  });
});

describe('task record', () => {
  it('a call is answered 201 while the tasks service is down; its record reaches tasks once it is back', async () => {
    const subject = 'taskdown';
    const key = randomUUID();
    stack.tasks.down = true;
    let r: request.Response;
    try {
      r = await attachAll(post(subject, key), [JPG]);
      expect(r.status).toBe(201);
      expect(await quotaOf(subject)).toMatchObject({ used: 1, held: 0 });
      // The record waits on the bus (tasks refuses it) while tasks is down.
      await stack.images.parts.relay.flush();
      await new Promise((res) => setTimeout(res, 100));
      expect(stack.tasks.records.get(r.body.task_id)).toBeUndefined();
    } finally {
      stack.tasks.down = false;
    }
    await stack.recorded();
    expect(stack.tasks.records.get(r.body.task_id)).toEqual({
      subject,
      body: expect.objectContaining({
        task_id: r.body.task_id,
        request_id: key,
        results_summary: { images: 1, succeeded: 1, failed: 0 },
      }),
    });
    // A replay answers the stored call and writes no second record.
    const replay = await attachAll(post(subject, key), [JPG]);
    expect(replay.status).toBe(200);
    const before = stack.tasks.received;
    await stack.recorded();
    expect(stack.tasks.received).toBe(before);
  });
  it("GET /internal/v1/calls/{task_id} answers the caller's stored call as the record it published; 404 for anyone else", async () => {
    const r = await attachAll(post('reader'), [JPG, PNG]);
    expect(r.status).toBe(201);
    const read = (subject: string, id: string) =>
      request(stack.images.url)
        .get(`/internal/v1/calls/${id}`)
        .set(
          IDENTITY_HEADER,
          identityHeader(subject, 'images', { method: 'GET', target: `/internal/v1/calls/${id}` }),
        );
    const own = await read('reader', r.body.task_id);
    expect(own.status).toBe(200);
    await stack.recorded();
    expect(own.body).toEqual(stack.tasks.records.get(r.body.task_id)?.body);
    expect(own.body).toMatchObject({
      subject: 'reader',
      results_summary: { images: 2, succeeded: 2, failed: 0 },
    });
    expect((await read('stranger', r.body.task_id)).status).toBe(404);
    expect((await read('reader', randomUUID())).status).toBe(404);
    expect((await read('reader', 'x'.repeat(65))).status).toBe(404);
  });
});
