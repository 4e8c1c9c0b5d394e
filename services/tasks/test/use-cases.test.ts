/** The use cases over in-memory fakes of quota and inference (no HTTP, no sibling service). */
import { randomUUID } from 'node:crypto';
import { ApiError, REASON, taskReason } from '@vision/shared';
import type { NewTask } from '../src/use-cases/create-task';
import { CreateTask } from '../src/use-cases/create-task';
import { stopTask } from '../src/use-cases/stop-task';
import { verifyTask } from '../src/use-cases/verify-task';
import { recoverSubmitting } from '../src/workers/crash-recovery';
import { pollJobs } from '../src/workers/job-poller';
import { reconcileResolving } from '../src/workers/reconciler';
import { type FakeWorld, fakeWorld, plantCreate } from './fakes';
import { refusal } from '../../../test/helpers/refusal';

const identity = { subject: 'ann', requestId: 'r1' };
const stream: NewTask = {
  scene_code: 'ship',
  business_threshold: 0.8,
  lower_bound: 0.3,
  source_type: 'stream',
  stream_url: 'rtsp://cam/1',
  stream_url_redacted: 'rtsp://cam/1',
  retention_days: 90,
};

// Each test opens its own in-memory PGlite (a few seconds on a busy machine).
jest.setTimeout(120_000);

let w: FakeWorld;
let create: CreateTask;
beforeEach(async () => {
  w = await fakeWorld();
  create = new CreateTask(w.ctx);
});
afterEach(() => w.db.close());

const admit = (key = randomUUID(), fingerprint = 'f1') =>
  create.create(identity, { key, fingerprint }, async () => stream);
/** A duplicate: the first request's answer, never a run of its own. */
const duplicate = (key: string, fingerprint = 'f1') =>
  create.create(identity, { key, fingerprint }, () => Promise.reject(new Error('a duplicate must not run')));

test('accepted: 201 running, charged once; a replay with the same key is 200 and charges nothing', async () => {
  const key = randomUUID();
  const first = await admit(key);
  expect(first).toMatchObject({ status: 201, replayed: false, task: { status: 'running' } });
  expect(w.quota.charged.size).toBe(1);
  const again = await duplicate(key);
  expect(again).toMatchObject({ status: 200, replayed: true, task: { task_id: first.task.task_id } });
  expect(w.quota.charged.size).toBe(1);
  const other = await refusal(duplicate(key, 'f2'));
  expect(other.details?.reason).toBe(REASON.idempotency_mismatch);
});

test('rejected by the backend: 201 refunded, charge returned', async () => {
  w.inference.submitAnswer = 'rejected';
  const a = await admit();
  expect(a.status).toBe(201);
  expect(a.task).toMatchObject({ status: 'refunded', reason: taskReason('backend_rejected') });
  expect(w.quota.charged.size).toBe(0);
  expect(w.quota.refunded.has(a.task.task_id)).toBe(true);
});

test('outcome unknown: 202 resolving, still charged; verification settles both ways', async () => {
  w.inference.submitAnswer = 'unknown';
  const a = await admit();
  expect(a).toMatchObject({ status: 202, task: { status: 'resolving' } });
  const b = await admit();
  expect(w.quota.charged.size).toBe(2);
  expect((await verifyTask(w.ctx, a.task.task_id, true)).status).toBe('running');
  expect((await verifyTask(w.ctx, b.task.task_id, false)).status).toBe('refunded');
  expect(w.quota.refunded.has(b.task.task_id)).toBe(true);
  const again = await refusal(verifyTask(w.ctx, b.task.task_id, true));
  expect(again.details?.reason).toBe(REASON.not_resolving);
});

test.each([
  ['not_delivered', 'OP-TASK-UPSTREAM-DOWN'],
  ['over_capacity', 'OP-TASK-UPSTREAM-DOWN'],
  ['breaker_open', 'OP-TASK-BREAKER-OPEN'],
] as const)('%s: %s, no task left, charge returned', async (answer, code) => {
  w.inference.submitAnswer = answer;
  const key = randomUUID();
  const err = await refusal(admit(key));
  expect(err.code).toBe(code);
  // Every 503 says when to come back: the breaker until its probe call, the backend in 10 s.
  expect(Number(err.headers?.['Retry-After'])).toBeGreaterThanOrEqual(1);
  expect(await w.ctx.store.claims.get('ann', key)).toBeUndefined();
  expect(w.quota.charged.size).toBe(0);
});

test('quota exhausted or unreachable: nothing left behind', async () => {
  w.quota.next = 'exhausted';
  expect((await refusal(admit())).code).toBe('OP-QUOTA-DAILY-EXHAUSTED');
  w.quota.next = 'unavailable';
  expect((await refusal(admit())).code).toBe('OP-SYS-UNAVAILABLE');
  expect(await w.ctx.store.countActive('ann')).toBe(0);
});

test('active-task limit and maintenance switch', async () => {
  for (let i = 0; i < 3; i++) await admit();
  expect((await refusal(admit())).details?.reason).toBe(REASON.active_tasks);
  create.setMaintenance(true);
  expect(() => create.assertAcceptingNewTasks()).toThrow(ApiError);
  create.setMaintenance(false);
  w.inference.open = true;
  expect(() => create.assertAcceptingNewTasks()).toThrow('failing');
});

test('a replay while the first request is still submitting answers in_progress after the wait', async () => {
  const key = randomUUID();
  const live = new Date(w.clock.now().getTime() + 60_000);
  await plantCreate(w.ctx.store, { ...stream, subject: 'ann' }, { key, fingerprint: 'f1', leaseUntil: live });
  const err = await refusal(duplicate(key));
  expect(err).toMatchObject({ code: 'OP-SYS-UNAVAILABLE', details: { reason: REASON.in_progress } });
  expect(err.headers).toMatchObject({ 'Retry-After': '1' });
  expect(w.quota.charged.size).toBe(0);
});

test('a duplicate of a create whose process died after writing its task finishes it: charged once, 200', async () => {
  const key = randomUUID();
  const taskId = await plantCreate(
    w.ctx.store,
    { ...stream, subject: 'ann' },
    { key, fingerprint: 'f1', leaseUntil: w.clock.now() },
  );
  await w.ctx.quota.charge(identity, taskId); // it had been charged before it died
  const r = await duplicate(key);
  expect(r).toMatchObject({ status: 200, replayed: true, task: { task_id: taskId, status: 'running' } });
  expect([...w.quota.charged]).toEqual([taskId]);
  expect((await w.ctx.store.claims.get('ann', key))?.state).toBe('completed');
  await recoverSubmitting(w.ctx);
  expect(w.inference.jobs.size).toBe(1);
});

test('stop: running -> stopped (200); ended -> OP-TASK-NOT-STOPPABLE; resolving remembers it (202)', async () => {
  const a = await admit();
  const stopped = await stopTask(w.ctx, a.task);
  expect(stopped).toMatchObject({ status: 200, task: { status: 'stopped' } });
  expect((await refusal(stopTask(w.ctx, stopped.task))).code).toBe('OP-TASK-NOT-STOPPABLE');
  w.inference.submitAnswer = 'unknown';
  const r = await admit();
  expect(await stopTask(w.ctx, r.task)).toMatchObject({ status: 202, task: { status: 'resolving' } });
  w.inference.jobs.set(r.task.task_id, { job_id: r.task.task_id, scene_code: 'ship', status: 'running' });
  await reconcileResolving(w.ctx);
  expect((await w.ctx.store.get(r.task.task_id))?.status).toBe('stopping');
});

test('crash recovery: a submitting task is charged (idempotently) and submitted; undeliverable ends refunded', async () => {
  const put = () => plantCreate(w.ctx.store, { ...stream, subject: 'ann' }, { leaseUntil: w.clock.now() });
  const ok = await put();
  w.clock.advance(1);
  await recoverSubmitting(w.ctx);
  expect((await w.ctx.store.get(ok))?.status).toBe('running');
  w.inference.submitAnswer = 'breaker_open';
  const gone = await put();
  w.clock.advance(1);
  await recoverSubmitting(w.ctx);
  expect(await w.ctx.store.get(gone)).toMatchObject({
    status: 'refunded',
    reason: taskReason('breaker_open'),
  });
  expect(w.quota.refunded.has(gone)).toBe(true);
});

test('a poll round goes on past a task whose write fails; that task is moved in a later round', async () => {
  const a = await admit();
  const b = await admit();
  for (const t of [a, b]) w.inference.jobs.get(t.task.task_id)!.status = 'failed';
  const move = w.ctx.store.move.bind(w.ctx.store);
  const spy = jest
    .spyOn(w.ctx.store, 'move')
    .mockImplementation((id, ...rest) =>
      id === a.task.task_id ? Promise.reject(new Error('write failed')) : move(id, ...rest),
    );
  await pollJobs(w.ctx);
  expect((await w.ctx.store.get(a.task.task_id))?.status).toBe('running');
  expect((await w.ctx.store.get(b.task.task_id))?.status).toBe('failed');
  spy.mockRestore();
  await pollJobs(w.ctx);
  expect((await w.ctx.store.get(a.task.task_id))?.status).toBe('failed');
});
