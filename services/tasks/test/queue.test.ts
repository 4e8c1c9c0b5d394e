/**
 * The queue of file tasks and the fair share of the inference slots, through the use cases and
 * workers over the real task store (in-memory PGlite) and fakes of quota and inference.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, REASON } from '@vision/shared';
import type { NewTask } from '../src/use-cases/create-task';
import { CreateTask } from '../src/use-cases/create-task';
import { stopTask } from '../src/use-cases/stop-task';
import { recoverSubmitting } from '../src/workers/crash-recovery';
import { dispatchQueued, expireQueued } from '../src/workers/dispatcher';
import { type FakeWorld, fakeWorld } from './fakes';
import { refusal } from '../../../test/helpers/refusal';

const base = { scene_code: 'ship', business_threshold: 0.8, lower_bound: 0.3, retention_days: 90 };
const file: NewTask = { ...base, source_type: 'file', object_key: 'videos/x.mp4', object_size: 10 };
const live: NewTask = {
  ...base,
  source_type: 'stream',
  stream_url: 'rtsp://cam/1',
  stream_url_redacted: 'rtsp://cam/1',
};

jest.setTimeout(120_000);

let w: FakeWorld;
let create: CreateTask;
beforeEach(async () => {
  w = await fakeWorld({ inferenceSlots: 4, maxActive: 3, queueMax: 3 });
  create = new CreateTask(w.ctx);
});
afterEach(() => w.db.close());

const admit = (subject: string, t: NewTask, key = randomUUID()) =>
  create.create({ subject, requestId: randomUUID() }, { key, fingerprint: key }, async () => t);

/** Ends the fake backend's job of `taskId` and the task (as the poller would) to free its slot. */
async function finish(taskId: string) {
  w.inference.jobs.delete(taskId);
  await w.ctx.store.move(taskId, 'job_succeeded');
}

test('the second key gets a slot, then queues instead of a 503; FIFO start when slots free up', async () => {
  const a = [await admit('a', file), await admit('a', file), await admit('a', file)];
  for (const r of a) expect(r.task.status).toBe('running');
  const b1 = await admit('b', file);
  expect(b1).toMatchObject({ status: 201, task: { status: 'running' } });
  // Full (4 of 4): b's next file task is accepted, charged once and waits (status submitting).
  const b2 = await admit('b', file);
  expect(b2).toMatchObject({ status: 201, task: { status: 'submitting' } });
  expect(b2.task.queued_at).not.toBeNull();
  expect(w.quota.charged.has(b2.task.task_id)).toBe(true);
  const a4 = await admit('a', live).catch((e: unknown) => e);
  expect(a4).toBeInstanceOf(ApiError); // a holds 3 = TASKS_MAX_ACTIVE
  // A replay of the queued create answers at once with the queued task.
  const key = b2.task.request_id;
  const again = await create.create(
    { subject: 'b', requestId: randomUUID() },
    { key, fingerprint: key },
    () => Promise.reject(new Error('a duplicate must not run')),
  );
  expect(again).toMatchObject({ status: 200, task: { task_id: b2.task.task_id, status: 'submitting' } });

  expect(await dispatchQueued(w.ctx)).toBe(0); // still full
  await finish(a[0].task.task_id);
  expect(await dispatchQueued(w.ctx)).toBe(1);
  expect((await w.ctx.store.get(b2.task.task_id))?.status).toBe('running');
  expect(w.quota.charged.size).toBe(5);
  expect(w.quota.refunded.size).toBe(0);
});

test('a live task of a key at its share is refused 429 fair_share while another key is owed the free slot', async () => {
  await admit('a', live);
  await admit('a', live);
  await admit('b', live);
  // a holds 2 = its share of 4 with b demanding; the free slot is owed to b.
  const err = await refusal(admit('a', live));
  expect(err).toMatchObject({ code: 'OP-QUOTA-RATE-LIMITED', details: { reason: REASON.fair_share } });
  expect(err.headers?.['Retry-After']).toBeDefined();
  expect(w.quota.charged.size).toBe(3); // nothing charged for the refusal
  expect(await admit('b', live)).toMatchObject({ task: { status: 'running' } });
});

test('the backend at capacity queues a file task even when our count saw a free slot', async () => {
  w.inference.submitAnswer = 'over_capacity';
  const r = await admit('a', file);
  expect(r).toMatchObject({ status: 201, task: { status: 'submitting' } });
  expect(r.task.queued_at).not.toBeNull();
  // A live task is refused as before: 503, nothing charged, no task.
  const err = await refusal(admit('a', live));
  expect(err.code).toBe('OP-TASK-UPSTREAM-DOWN');
  w.inference.submitAnswer = 'accepted';
  expect(await dispatchQueued(w.ctx)).toBe(1);
  expect((await w.ctx.store.get(r.task.task_id))?.status).toBe('running');
  expect(w.quota.charged.size).toBe(1);
});

test('the queue is bounded: beyond TASKS_QUEUE_MAX a file task is 503 queue_full and charged nothing', async () => {
  w.inference.submitAnswer = 'over_capacity';
  for (const s of ['a', 'b', 'c']) await admit(s, file);
  const err = await refusal(admit('d', file));
  expect(err).toMatchObject({ code: 'OP-TASK-UPSTREAM-DOWN', details: { reason: REASON.queue_full } });
  expect(w.quota.charged.size).toBe(3);
});

test('a stopped queued task is refunded at once; an expired wait is refunded; neither is submitted', async () => {
  w.inference.submitAnswer = 'over_capacity';
  const q1 = await admit('a', file);
  const q2 = await admit('b', file);
  const stopped = await stopTask(w.ctx, q1.task);
  expect(stopped).toMatchObject({ status: 200, task: { status: 'refunded' } });
  expect(stopped.task.reason).toMatch(/^withdrawn_from_queue/);
  expect(w.quota.refunded.has(q1.task.task_id)).toBe(true);
  w.clock.advance(3_600_001);
  expect(await expireQueued(w.ctx)).toBe(1);
  const t2 = await w.ctx.store.get(q2.task.task_id);
  expect(t2).toMatchObject({ status: 'refunded', queued_at: null });
  expect(t2?.reason).toMatch(/^queue_timeout/);
  expect(w.quota.refunded.has(q2.task.task_id)).toBe(true);
  expect(w.inference.jobs.size).toBe(0);
});

test('crash recovery leaves queued tasks to the dispatcher, and queues a file task it cannot place', async () => {
  w.inference.submitAnswer = 'over_capacity';
  const q = await admit('a', file);
  // A claimed task whose dispatcher died (queued_at cleared, still submitting): recovery puts it back.
  expect(await w.ctx.store.claim(q.task.task_id)).toBe(true);
  w.clock.advance(1001); // untouched for TASKS_RECOVER_AFTER_MS (1000 here)
  await recoverSubmitting(w.ctx);
  const t = await w.ctx.store.get(q.task.task_id);
  expect(t).toMatchObject({ status: 'submitting' });
  expect(t?.queued_at).not.toBeNull();
  expect(w.quota.charged.size).toBe(1);
  // Queued: recovery does not touch it again.
  w.inference.submitAnswer = 'accepted';
  w.clock.advance(1);
  await recoverSubmitting(w.ctx);
  expect((await w.ctx.store.get(q.task.task_id))?.status).toBe('submitting');
  expect(await dispatchQueued(w.ctx)).toBe(1);
  expect((await w.ctx.store.get(q.task.task_id))?.status).toBe('running');
});
