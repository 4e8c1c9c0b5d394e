/**
 * Charges and refunds that cross a slow peer: a recovered task whose charge was refunded must not run
 * for free, and a job a slow backend creates after its resolving task was refunded is stopped.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { FakeClock } from '@vision/shared';
import { ADMIN_TOKEN, type Stack, quotaUsed, startClipServer, startStack, waitFor } from './harness';
import { plantCreate } from './fakes';

let clips: Awaited<ReturnType<typeof startClipServer>>;
beforeAll(async () => {
  clips = await startClipServer();
});
afterAll(async () => {
  await clips.close();
});

const createUrl = (stack: Stack, subject: string) =>
  stack.http
    .post('/v1/vision/tasks')
    .use(stack.as(subject))
    .set('Idempotency-Key', randomUUID())
    .send({ scene_code: 'ship', stream_url: clips.url('boats_kodak_pan_synth.mp4') });

describe('recovery of a submitting task whose charge was refunded', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      env: { TASKS_RECOVER_AFTER_MS: '1000', TASKS_RECONCILE_INTERVAL_MS: '600000' },
    });
  });
  afterAll(() => stack.close());

  test('moves it to refunded and never submits it', async () => {
    const taskId = randomUUID();
    const url = clips.url('boats_kodak_pan_synth.mp4');
    // A create that crashed after its charge was refunded: charged, refunded, the row left submitting.
    const q = request(stack.quota.url);
    expect(
      (
        await q
          .post('/internal/v1/charges')
          .use(stack.as('ned', 'quota'))
          .send({ charge_id: taskId, kind: 'video', units: 1 })
      ).status,
    ).toBe(201);
    expect((await q.post(`/internal/v1/charges/${taskId}/refund`).use(stack.as('ned', 'quota'))).status).toBe(
      200,
    );
    // Its claim's lease has lapsed (the create's process is gone).
    await plantCreate(
      stack.tasks.store,
      {
        task_id: taskId,
        subject: 'ned',
        scene_code: 'ship',
        business_threshold: 0.8,
        lower_bound: 0.25,
        source_type: 'stream',
        stream_url: url,
        stream_url_redacted: url,
        retention_days: 90,
      },
      { leaseUntil: new Date(Date.now() - 1) },
    );

    // (the reconciler's own first round may be the one that takes it: either way it is recovered once)
    await stack.tasks.workers.recoverSubmitting();
    await waitFor(async () => (await stack.tasks.store.get(taskId))?.status !== 'submitting', 3000);
    expect((await stack.tasks.store.get(taskId))?.status).toBe('refunded');
    expect(stack.inference.jobs.has(taskId)).toBe(false);
    expect(await quotaUsed(stack, 'ned')).toBe(0);
  });
});

describe('jobs created after their resolving task was refunded', () => {
  let stack: Stack;
  const clock = new FakeClock(new Date());
  beforeAll(async () => {
    stack = await startStack({
      clock,
      env: {
        TASKS_BACKEND_TIMEOUT_MS: '500',
        TASKS_RESOLVE_GRACE_MS: '0',
        TASKS_RECONCILE_INTERVAL_MS: '600000',
        TASKS_MAX_ACTIVE: '10',
        TASKS_BREAKER_VOLUME: '100',
      },
      quotaDaily: 50,
    });
  });
  afterAll(() => stack.close());

  const lateJob = (taskId: string) =>
    stack.inference.jobs.set(taskId, { job_id: taskId, scene_code: 'ship', status: 'running', source: {} });

  test('refunding a resolving task as not created stops its job', async () => {
    stack.inference.behaviour.submit = 'hang_after_create'; // the job exists, the answer never came
    const t = await createUrl(stack, 'oli');
    stack.inference.behaviour.submit = 'accept';
    expect(t.body.status).toBe('resolving');
    const v = await request(stack.tasks.url)
      .post(`/internal/v1/admin/tasks/${t.body.task_id}/verify`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ created: false });
    expect(v.body.status).toBe('refunded');
    expect(stack.inference.jobs.get(t.body.task_id)?.status).toBe('stopped');
    expect(await quotaUsed(stack, 'oli')).toBe(0);
  });

  test('the reconciler stops a job that appears within 10 minutes of the refund, not later', async () => {
    stack.inference.behaviour.submit = 'hang';
    const early = await createUrl(stack, 'pat');
    const old = await createUrl(stack, 'pat');
    stack.inference.behaviour.submit = 'accept';
    for (const r of [early, old]) expect(r.body.status).toBe('resolving');
    await stack.tasks.workers.reconciler.kick(); // no job yet: both refunded after the grace
    for (const r of [early, old])
      expect((await stack.tasks.store.get(r.body.task_id))?.status).toBe('refunded');

    // The slow backend creates the first job now...
    lateJob(early.body.task_id);
    clock.advance(60_000);
    await stack.tasks.workers.reconciler.kick();
    expect(stack.inference.jobs.get(early.body.task_id)?.status).toBe('stopped');

    // ...and the second one only after the window: left alone.
    clock.advance(10 * 60_000);
    lateJob(old.body.task_id);
    await stack.tasks.workers.reconciler.kick();
    expect(stack.inference.jobs.get(old.body.task_id)?.status).toBe('running');
    expect(await quotaUsed(stack, 'pat')).toBe(0);
  });
});
