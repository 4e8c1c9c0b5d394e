/**
 * A call that outlives its quota hold on a day that filled up meanwhile: quota refuses the settle
 * (429 hold_expired), so the succeeded images are not granted. They are reported and stored as
 * failed with OP-QUOTA-DAILY-EXHAUSTED (replays agree) and nothing is charged (docs/API.md).
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { FakeClock } from '@vision/shared';
import { withUngrantedImagesFailed } from '../src/domain/results';
import { IDENTITY_HEADER, identityHeader, media, startStack, type Stack } from './harness';

jest.setTimeout(60_000);

const PATH = '/v1/vision/image-detections';
const JPG = 'sheep_coco5992.jpg';
const HOLD_TTL_MS = 1000; // the smallest hold quota accepts; quota runs on the real clock

let stack: Stack;
let clock: FakeClock;
beforeAll(async () => {
  clock = new FakeClock(new Date());
  stack = await startStack({
    inference: 'fake',
    clock,
    env: { IMAGES_HOLD_TTL_MS: String(HOLD_TTL_MS), IMAGES_CALL_LEASE_MS: '5000' },
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

async function imagesQuota(subject: string) {
  const r = await request(stack.quota.url)
    .get('/v1/vision/quota')
    .set(IDENTITY_HEADER, identityHeader(subject, 'quota'));
  return r.body.images as { used: number; held: number; limit: number };
}

/** Lets the hold expire (real time: quota's clock), then uses the whole day with another charge. */
async function expireHoldAndFillDay(subject: string): Promise<void> {
  await new Promise((r) => setTimeout(r, HOLD_TTL_MS + 200));
  const { limit, used } = await imagesQuota(subject);
  await request(stack.quota.url)
    .post('/internal/v1/charges')
    .set(IDENTITY_HEADER, identityHeader(subject, 'quota'))
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

test('a settle refused as hold_expired fails the succeeded images in the answer and in replays', async () => {
  const subject = 'slowpoke';
  const key = randomUUID();
  stack.fake!.beforeDetect = () => expireHoldAndFillDay(subject);
  let r;
  try {
    r = await post(subject, key).field('scene_code', 'ship').attach('files', media(JPG), 'a.jpg');
  } finally {
    stack.fake!.beforeDetect = undefined;
  }
  expect(r.status).toBe(201);
  expect(r.body.results).toEqual([{ seq: 0, status: 'failed', error_code: 'OP-QUOTA-DAILY-EXHAUSTED' }]);
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
  expect(replay.body.results).toEqual(r.body.results);
});

test('the sweeper finishing a stored call whose settle is refused stores the images as failed', async () => {
  const subject = 'crashed-late';
  const calls = stack.images.parts.calls;
  const taskId = randomUUID();
  const key = randomUUID();
  await request(stack.quota.url)
    .post('/internal/v1/holds')
    .set(IDENTITY_HEADER, identityHeader(subject, 'quota'))
    .send({ hold_id: taskId, kind: 'image', units: 2, ttl_ms: HOLD_TTL_MS })
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
  );
  await expireHoldAndFillDay(subject);
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
