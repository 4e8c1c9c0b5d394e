import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { FakeClock } from '@vision/shared';
import { loadImagesConfig } from '../src/config';
import {
  IDENTITY_HEADER,
  identityHeader,
  imagesQuotaOf,
  media,
  sha256,
  startStack,
  type Stack,
} from './harness';
import { keepClearOfQuotaDayTurn } from '../../../test/helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

jest.setTimeout(60_000);

const PATH = '/v1/vision/image-detections';
const JPG = 'sheep_coco5992.jpg';
const PNG = 'boat_sailboat_kodim06.png';
const DAY = 24 * 60 * 60 * 1000;

let stack: Stack;
let clock: FakeClock;
beforeAll(async () => {
  clock = new FakeClock(new Date());
  // Test-local inference (docs/INTERNAL.md contract) so that faults can be injected per image.
  stack = await startStack({ inference: 'fake', clock, env: { IMAGES_CALL_CLAIM_MS: '5000' } });
});
afterAll(async () => {
  await stack?.close();
});

const post = (subject: string, key = randomUUID()) =>
  request(stack.images.url)
    .post(PATH)
    .set(IDENTITY_HEADER, identityHeader(subject))
    .set('Idempotency-Key', key);

const quotaOf = (subject: string) => imagesQuotaOf(stack, subject);

it('a scene inference lists as disabled is OP-TASK-SCENE-UNAVAILABLE', async () => {
  const r = await post('f1').field('scene_code', 'fishing').attach('files', media(JPG), 'a.jpg');
  expect(r.status).toBe(400);
  expect(r.body.error.code).toBe('OP-TASK-SCENE-UNAVAILABLE');
  expect(r.body.error.details.scene_code).toBe('fishing');
});

it('an image whose inference call fails (backend error) fails alone with OP-TASK-UPSTREAM-DOWN', async () => {
  const fake = stack.fake!;
  fake.poisoned.add(sha256(media(PNG)));
  try {
    const r = await post('f2')
      .field('scene_code', 'ship')
      .attach('files', media(JPG), 'a.jpg')
      .attach('files', media(PNG), 'b.png');
    expect(r.status).toBe(201);
    expect(r.body.results[0]).toMatchObject({ seq: 0, status: 'succeeded' });
    expect(r.body.results[0].objects[0]).not.toHaveProperty('track_id');
    expect(r.body.results[1]).toEqual({ seq: 1, status: 'failed', error_code: 'OP-TASK-UPSTREAM-DOWN' });
    expect(await quotaOf('f2')).toMatchObject({ used: 1, held: 0 });
  } finally {
    fake.poisoned.clear();
  }
});

it('a refused hold (asked for while the first images are detected) fails the call with nothing written, after at most one detection per worker', async () => {
  const fake = stack.fake!;
  const calls = fake.detectCalls;
  const stored = (await stack.store.listOlderThan('images/', new Date(Date.now() + DAY), 10_000)).length;
  await stack.recorded();
  const records = stack.tasks.records.size;
  const key = randomUUID();
  for (let attempt = 0; attempt < 2; attempt++) {
    let r = post('none', key).field('scene_code', 'ship');
    for (let i = 0; i < 6; i++) r = r.attach('files', media(i % 2 ? PNG : JPG), `i${i}.png`);
    const res = await r;
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('OP-QUOTA-DAILY-EXHAUSTED');
  }
  // Two calls of six images each, at most IMAGES_DETECT_CONCURRENCY detections each.
  expect(fake.detectCalls - calls).toBeLessThanOrEqual(2 * loadImagesConfig({}).IMAGES_DETECT_CONCURRENCY);
  expect((await stack.store.listOlderThan('images/', new Date(Date.now() + DAY), 10_000)).length).toBe(
    stored,
  );
  await stack.recorded();
  expect(stack.tasks.records.size).toBe(records);
  expect(await quotaOf('none')).toMatchObject({ used: 0, held: 0 });
});

it('a call interrupted before settling (owner died) is run again by a retry with the same key, under the same task id', async () => {
  const subject = 'crash';
  const key = randomUUID();
  const calls = stack.images.parts.calls;
  // What a crashed owner leaves: a running record whose lease has lapsed (and a hold that will expire).
  const fingerprint = (await import('../src/domain/fingerprint')).requestFingerprint('ship', [
    sha256(media(JPG)),
  ]);
  const taskId = randomUUID();
  await calls.claim({
    subject,
    key,
    taskId,
    fingerprint,
    sceneCode: 'ship',
    imageCount: 1,
    leaseUntil: new Date(clock.now().getTime() - 1),
    createdAt: clock.now(),
  });
  const r = await post(subject, key).field('scene_code', 'ship').attach('files', media(JPG), 'a.jpg');
  expect(r.status).toBe(201);
  expect(r.body.task_id).toBe(taskId);
  expect((await calls.get(subject, key))?.attempt).toBe(1);
  expect(await quotaOf(subject)).toMatchObject({ used: 1, held: 0 });
  const replay = await post(subject, key).field('scene_code', 'ship').attach('files', media(JPG), 'a.jpg');
  expect(replay.status).toBe(200);
  expect(replay.body.replayed).toBe(true);
});

it('a call that stored its results but crashed before its charge was reported is reported once by the sweeper', async () => {
  const subject = 'crash2';
  const key = randomUUID();
  const r = await post(subject, key)
    .field('scene_code', 'ship')
    .attach('files', media(JPG), 'a.jpg')
    .attach('files', media(PNG), 'b.png');
  expect(r.status).toBe(201);
  // Re-create the state a crash between storing the results and reporting the charge leaves: a lease of the
  // dead replica (not in this one's book) with the call's units reserved.
  const calls = stack.images.parts.calls;
  const taskId = randomUUID();
  const key2 = randomUUID();
  const leaseId = `lease-${taskId}`;
  await request(stack.quota.url)
    .put(`/internal/v1/leases/${leaseId}`)
    .set(
      IDENTITY_HEADER,
      identityHeader(subject, 'quota', { method: 'PUT', target: `/internal/v1/leases/${leaseId}` }),
    )
    .send({ kind: 'image', min_units: 2, max_units: 2, window_ms: 10_000, ttl_ms: 600_000 })
    .expect(201);
  await calls.claim({
    subject,
    key: key2,
    taskId,
    fingerprint: 'fp',
    sceneCode: 'ship',
    imageCount: 2,
    leaseUntil: new Date(clock.now().getTime() + 1000),
    createdAt: clock.now(),
  });
  await calls.storeResults({ subject, key: key2, taskId, attempt: 0 }, r.body.results, 2, leaseId);
  expect(await quotaOf(subject)).toMatchObject({ used: 2, held: 2 });
  expect(await stack.images.parts.detections.recoverLapsed()).toBe(0); // lease still live
  clock.advance(2000);
  expect(await stack.images.parts.detections.recoverLapsed()).toBe(1);
  expect(await stack.images.parts.detections.recoverLapsed()).toBe(0);
  expect(await quotaOf(subject)).toMatchObject({ used: 4, held: 0 });
  expect((await calls.get(subject, key2))?.state).toBe('completed');
});

it('the janitor deletes images and call results after 90 days, not before', async () => {
  const subject = 'old';
  const key = randomUUID();
  const r = await post(subject, key).field('scene_code', 'ship').attach('files', media(JPG), 'a.jpg');
  expect(r.status).toBe(201);
  const day = new Date().toISOString().slice(0, 10);
  const objectKey = `images/${day}/${r.body.task_id}/0.jpg`;
  expect(await stack.store.stat(objectKey)).toBeDefined();
  const janitor = stack.images.parts.janitor;
  clock.advance(89 * DAY);
  await janitor.runOnce();
  expect(await stack.store.stat(objectKey)).toBeDefined();
  expect(await stack.images.parts.calls.get(subject, key)).toBeDefined();
  clock.advance(2 * DAY);
  const removed = await janitor.runOnce();
  expect(removed.objects).toBeGreaterThanOrEqual(1);
  expect(removed.calls).toBeGreaterThanOrEqual(1);
  expect(await stack.store.stat(objectKey)).toBeUndefined();
  expect(await stack.images.parts.calls.get(subject, key)).toBeUndefined();
});
