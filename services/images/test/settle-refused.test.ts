/**
 * A call whose spend reaches quota only after its lease expired (quota unreachable for longer than the
 * lease's ttl, or its replica dead), on a day that filled up meanwhile: quota refuses the spend
 * (`exhausted`), so the succeeded images are not granted. They are stored as failed with
 * OP-QUOTA-DAILY-EXHAUSTED (replays and the task record agree) and nothing is charged (docs/API.md).
 * A call recorded with a quota hold (no lease) settles that hold the same way.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { FakeClock } from '@vision/shared';
import { withUngrantedImagesFailed } from '../src/domain/results';
import { IDENTITY_HEADER, identityHeader, imagesQuotaOf, media, startStack, type Stack } from './harness';
import { keepClearOfQuotaDayTurn } from '../../../test/helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

jest.setTimeout(60_000);

const PATH = '/v1/vision/image-detections';
const JPG = 'sheep_coco5992.jpg';
// The smallest window and ttl: a lease expires 2 s after it was taken (quota runs on the real clock).
const LEASE_MS = 2000;

let stack: Stack;
let clock: FakeClock;
beforeAll(async () => {
  clock = new FakeClock(new Date());
  stack = await startStack({
    inference: 'fake',
    clock,
    env: {
      IMAGES_QUOTA_LEASE_GRACE_MS: '1000',
      IMAGES_QUOTA_LEASE_WINDOW_MS: '1000',
      // Spends are reported only when the test flushes them (as if quota could not be reached).
      IMAGES_QUOTA_REPORT_MS: '600000',
      IMAGES_CALL_CLAIM_MS: '5000',
    },
  });
});
afterAll(async () => {
  await stack?.close();
});

const post = (subject: string, key: string) =>
  request(stack.images.url)
    .post(PATH)
    .set(IDENTITY_HEADER, identityHeader(subject))
    .set('Idempotency-Key', key);

const imagesQuota = (subject: string) => imagesQuotaOf(stack, subject);

/** Lets a lease or hold expire (real time: quota's clock), then uses the whole day with another charge. */
async function expireAndFillDay(subject: string): Promise<void> {
  await new Promise((r) => setTimeout(r, LEASE_MS + 200));
  // Read without reporting the spends this replica still has queued.
  const q = await request(stack.quota.url)
    .get('/v1/vision/quota')
    .set(IDENTITY_HEADER, identityHeader(subject, 'quota', { method: 'GET', target: '/v1/vision/quota' }));
  const { limit, used } = q.body.images as { limit: number; used: number };
  await request(stack.quota.url)
    .post('/internal/v1/charges')
    .set(
      IDENTITY_HEADER,
      identityHeader(subject, 'quota', { method: 'POST', target: '/internal/v1/charges' }),
    )
    .send({ charge_id: `fill-${randomUUID()}`, kind: 'image', units: limit - used })
    .expect(201);
}

test('the domain rule: succeeded images become failed with OP-QUOTA-DAILY-EXHAUSTED, failures stay', () => {
  expect(
    withUngrantedImagesFailed([
      { seq: 0, status: 'succeeded', objects: [] },
      { seq: 1, status: 'failed', error_code: 'OP-TASK-UPSTREAM-DOWN' },
    ]),
  ).toEqual([
    { seq: 0, status: 'failed', error_code: 'OP-QUOTA-DAILY-EXHAUSTED' },
    { seq: 1, status: 'failed', error_code: 'OP-TASK-UPSTREAM-DOWN' },
  ]);
});

test('a spend refused after its lease expired fails the succeeded images in the stored results and replays', async () => {
  const subject = 'slowpoke';
  const key = randomUUID();
  const r = await post(subject, key).field('scene_code', 'ship').attach('files', media(JPG), 'a.jpg');
  expect(r.status).toBe(201);
  expect(r.body.results[0].status).toBe('succeeded');
  expect((await stack.images.parts.calls.get(subject, key))?.state).toBe('settling');
  await expireAndFillDay(subject);
  const q = await imagesQuota(subject);
  expect(q).toMatchObject({ used: q.limit, held: 0 }); // only the filling charge: the image cost nothing
  const rec = await stack.images.parts.calls.get(subject, key);
  expect(rec?.state).toBe('completed');
  // The task record counts the image as failed too (it was first written as succeeded).
  await stack.recorded();
  expect(stack.tasks.records.get(r.body.task_id)?.body.results_summary).toEqual({
    images: 1,
    succeeded: 0,
    failed: 1,
  });
  const replay = await post(subject, key).field('scene_code', 'ship').attach('files', media(JPG), 'a.jpg');
  expect(replay.status).toBe(200);
  expect(replay.body.replayed).toBe(true);
  expect(replay.body.results).toEqual([{ seq: 0, status: 'failed', error_code: 'OP-QUOTA-DAILY-EXHAUSTED' }]);
});

test('a spend reported while its lease lives is charged once and completes the call', async () => {
  const subject = 'punctual';
  const key = randomUUID();
  const r = await post(subject, key).field('scene_code', 'ship').attach('files', media(JPG), 'a.jpg');
  expect(r.status).toBe(201);
  // The lease still reserves the unit: the rest of the day can be charged, not that unit.
  await stack.images.parts.leases.flush();
  const q = await imagesQuota(subject);
  expect(q).toMatchObject({ used: 1, held: 0 });
  expect((await stack.images.parts.calls.get(subject, key))?.state).toBe('completed');
  expect(
    (await post(subject, key).field('scene_code', 'ship').attach('files', media(JPG), 'a.jpg')).body
      .results[0].status,
  ).toBe('succeeded');
});

test('the sweeper finishing a call recorded with a hold whose settle is refused stores the images as failed', async () => {
  const subject = 'crashed-late';
  const calls = stack.images.parts.calls;
  const taskId = randomUUID();
  const key = randomUUID();
  await request(stack.quota.url)
    .post('/internal/v1/holds')
    .set(IDENTITY_HEADER, identityHeader(subject, 'quota', { method: 'POST', target: '/internal/v1/holds' }))
    .send({ hold_id: taskId, kind: 'image', units: 2, ttl_ms: 1000 })
    .expect(201);
  await calls.claim({
    subject,
    key,
    taskId,
    fingerprint: 'fp',
    sceneCode: 'ship',
    imageCount: 2,
    leaseUntil: new Date(clock.now().getTime() + 1000),
    createdAt: clock.now(),
  });
  await calls.storeResults(
    { subject, key, taskId, attempt: 0 },
    [
      { seq: 0, status: 'succeeded', objects: [] },
      { seq: 1, status: 'failed', error_code: 'OP-TASK-REQUEST-INVALID' },
    ],
    1,
    'unused',
  );
  // Recorded with a hold, not a lease.
  await stack.images.db.knex('image_calls').where({ task_id: taskId }).update({ lease_id: null });
  await expireAndFillDay(subject);
  clock.advance(2000);
  expect(await stack.images.parts.detections.recoverLapsed()).toBe(1);
  const rec = await calls.get(subject, key);
  expect(rec?.state).toBe('completed');
  expect(rec?.units).toBe(0);
  expect(rec?.results).toEqual([
    { seq: 0, status: 'failed', error_code: 'OP-QUOTA-DAILY-EXHAUSTED' },
    { seq: 1, status: 'failed', error_code: 'OP-TASK-REQUEST-INVALID' },
  ]);
  await stack.recorded();
  expect(stack.tasks.records.get(taskId)?.body.results_summary).toEqual({
    images: 2,
    succeeded: 0,
    failed: 2,
  });
  const q = await imagesQuota(subject);
  expect(q).toMatchObject({ used: q.limit, held: 0 });
});
