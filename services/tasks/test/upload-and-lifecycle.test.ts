import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import request from 'supertest';
import {
  FakeClock,
  loadJobGrantKey,
  metrics,
  metricsRegistry,
  REASON,
  TOPICS,
  verifyJobGrant,
} from '@vision/shared';
import { identityDir } from '../../../test/helpers/identity';
import {
  ADMIN_TOKEN,
  MOV,
  MP4,
  type Stack,
  quotaUsed,
  startClipServer,
  startStack,
  waitFor,
} from './harness';

let clips: Awaited<ReturnType<typeof startClipServer>>;
beforeAll(async () => {
  clips = await startClipServer();
});
afterAll(async () => {
  await clips.close();
});

const createUrl = (stack: Stack, subject: string, key = randomUUID()) =>
  stack.http
    .post('/v1/vision/tasks')
    .use(stack.as(subject))
    .set('Idempotency-Key', key)
    .send({ scene_code: 'ship', stream_url: clips.url('boats_kodak_pan_synth.mp4') });

const upload = (stack: Stack, subject: string, file: string | Buffer, name: string, key = randomUUID()) =>
  stack.http
    .post('/v1/vision/video-tasks')
    .use(stack.as(subject))
    .set('Idempotency-Key', key)
    .field('scene_code', 'person_vehicle')
    .attach('file', typeof file === 'string' ? readFileSync(file) : file, name);

describe('uploads', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      env: { TASKS_MAX_ACTIVE: '10', TASKS_MAX_VIDEO_BYTES: String(2 * 1024 * 1024) },
    });
  });
  afterAll(() => stack.close());

  test('MP4 and MOV create running file tasks; the object is stored; a replay keeps one object', async () => {
    const key = randomUUID();
    const mp4 = await upload(stack, 'ann', MP4, 'clip.mp4', key);
    expect(mp4.status).toBe(201);
    expect(mp4.body.status).toBe('running');
    const job = stack.inference.jobs.get(mp4.body.task_id);
    expect(job?.source).toMatchObject({ type: 'object' });
    // The job carries tasks' grant for this task and the caller's subject (results stores its frames under it).
    const grant = verifyJobGrant(
      loadJobGrantKey(identityDir()),
      stack.inference.grants.get(mp4.body.task_id),
      mp4.body.task_id,
    );
    expect(grant).toMatchObject({ ok: true, grant: { subject: 'ann', scene_code: 'person_vehicle' } });
    const objectKey = (job?.source as { key: string }).key;
    expect(objectKey).toMatch(/^videos\/[0-9a-f]{16}\/[0-9a-f-]{36}$/);
    expect(stack.objectFiles()).toHaveLength(1);

    const replay = await upload(stack, 'ann', MP4, 'renamed.mp4', key);
    expect(replay.status).toBe(200);
    expect(replay.body.task_id).toBe(mp4.body.task_id);
    expect(stack.objectFiles()).toHaveLength(1);
    const mismatch = await upload(stack, 'ann', MOV, 'clip.mov', key);
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.details.reason).toBe(REASON.idempotency_mismatch);

    const mov = await upload(stack, 'ann', MOV, 'clip.mov');
    expect(mov.status).toBe(201);
    expect(stack.objectFiles()).toHaveLength(2);
    expect(await quotaUsed(stack, 'ann')).toBe(2);
  });

  test.each<[string, () => ReturnType<typeof upload>, string]>([
    [
      'text named .mp4',
      () => upload(stack, 'ben', Buffer.from('just some text, not a video at all, really'), 'x.mp4'),
      REASON.unsupported_type,
    ],
    [
      'too large',
      () =>
        upload(stack, 'ben', Buffer.concat([readFileSync(MP4), Buffer.alloc(2 * 1024 * 1024)]), 'big.mp4'),
      REASON.file_too_large,
    ],
    [
      'extra field',
      () =>
        stack.http
          .post('/v1/vision/video-tasks')
          .use(stack.as('ben'))
          .set('Idempotency-Key', randomUUID())
          .field('scene_code', 'ship')
          .field('note', 'x')
          .attach('file', readFileSync(MP4), 'a.mp4'),
      REASON.unknown_field,
    ],
    [
      'other file field',
      () =>
        stack.http
          .post('/v1/vision/video-tasks')
          .use(stack.as('ben'))
          .set('Idempotency-Key', randomUUID())
          .field('scene_code', 'ship')
          .attach('video', readFileSync(MP4), 'a.mp4'),
      REASON.unknown_field,
    ],
    [
      'not multipart',
      () =>
        stack.http
          .post('/v1/vision/video-tasks')
          .use(stack.as('ben'))
          .set('Idempotency-Key', randomUUID())
          .send({ scene_code: 'ship' }),
      REASON.not_multipart,
    ],
    [
      'no file',
      () =>
        stack.http
          .post('/v1/vision/video-tasks')
          .use(stack.as('ben'))
          .set('Idempotency-Key', randomUUID())
          .field('scene_code', 'ship'),
      REASON.file_missing,
    ],
  ])('%s -> 400 %s, no object, no task, no charge', async (_name, send, reason) => {
    const before = stack.objectFiles().length;
    const r = await send();
    expect(r.status).toBe(400);
    expect(r.body.error.details.reason).toBe(reason);
    expect(stack.objectFiles()).toHaveLength(before);
    expect((await stack.http.get('/v1/vision/tasks').use(stack.as('ben'))).body.items).toEqual([]);
    expect(await quotaUsed(stack, 'ben')).toBe(0);
  });

  test('a file of exactly the maximum size is accepted; one byte more is refused', async () => {
    const max = 2 * 1024 * 1024;
    const mp4 = readFileSync(MP4);
    const exact = Buffer.concat([mp4, Buffer.alloc(max - mp4.length)]);
    const ok = await upload(stack, 'fay', exact, 'exact.mp4');
    expect(ok.status).toBe(201);
    const over = await upload(stack, 'fay', Buffer.concat([exact, Buffer.alloc(1)]), 'over.mp4');
    expect(over.status).toBe(400);
    expect(over.body.error.details.reason).toBe(REASON.file_too_large);
    expect(await quotaUsed(stack, 'fay')).toBe(1);
  });

  test('disabled scene on upload: 400 and the object is deleted', async () => {
    const before = stack.objectFiles().length;
    const r = await stack.http
      .post('/v1/vision/video-tasks')
      .use(stack.as('ben'))
      .set('Idempotency-Key', randomUUID())
      .field('scene_code', 'fire_smoke')
      .attach('file', readFileSync(MP4), 'a.mp4');
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('OP-TASK-SCENE-UNAVAILABLE');
    expect(stack.objectFiles()).toHaveLength(before);
  });

  test('daily quota exhausted: 429, nothing left behind', async () => {
    for (let i = 0; i < 5; i++) expect((await createUrl(stack, 'cat')).status).toBe(201);
    const before = stack.objectFiles().length;
    const r = await upload(stack, 'cat', MP4, 'a.mp4');
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe('OP-QUOTA-DAILY-EXHAUSTED');
    expect(r.headers.ratelimit).toMatch(/r=0/);
    expect(r.headers['retry-after']).toBeDefined();
    expect(stack.objectFiles()).toHaveLength(before);
    expect((await stack.http.get('/v1/vision/tasks').use(stack.as('cat'))).body.items).toHaveLength(5);
  });

  test('20 concurrent uploads with one key: one task, one charge, one object', async () => {
    const key = randomUUID();
    const before = stack.objectFiles().length;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => upload(stack, 'dan', MOV, 'a.mov', key)),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(19);
    expect(new Set(answers.map((a) => a.body.task_id)).size).toBe(1);
    expect(await quotaUsed(stack, 'dan')).toBe(1);
    expect(stack.objectFiles()).toHaveLength(before + 1);
  });

  /** Publishes an image call's record on vision.image-calls, as the images service's outbox relay does. */
  const publishRecord = (r: Record<string, unknown>) =>
    stack.bus.publish(TOPICS.imageCalls, [
      {
        key: String(r.task_id),
        value: { schema: 1, event_id: randomUUID(), type: 'image_call.recorded', ...r },
      },
    ]);
  const imageRecord = (over: Record<string, unknown> = {}) => ({
    task_id: randomUUID(),
    subject: 'eve',
    request_id: randomUUID(),
    scene_code: 'ship',
    status: 'succeeded',
    results_summary: { images: 1, succeeded: 1, failed: 0 },
    created_at: new Date(Date.now() - 60_000).toISOString(),
    updated_at: new Date(Date.now() - 60_000).toISOString(),
    ...over,
  });
  const adminView = async (taskId: string) =>
    (await stack.http.get(`/internal/v1/admin/tasks/${taskId}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`))
      .body as Record<string, unknown>;

  test('image task records: from vision.image-calls, readable by their owner', async () => {
    const rec = imageRecord({ created_at: new Date().toISOString(), updated_at: new Date().toISOString() });
    const taskId = rec.task_id;
    await publishRecord(rec);
    await publishRecord(rec); // delivered again: one task
    await waitFor(
      async () => (await stack.http.get(`/v1/vision/tasks/${taskId}`).use(stack.as('eve'))).status === 200,
    );
    const got = await stack.http.get(`/v1/vision/tasks/${taskId}`).use(stack.as('eve'));
    expect(got.body).toMatchObject({
      task_id: taskId,
      kind: 'image',
      status: 'succeeded',
      request_id: rec.request_id,
      created_at: rec.created_at,
      updated_at: rec.updated_at,
    });
    expect((await stack.http.get(`/v1/vision/tasks/${taskId}`).use(stack.as('zed'))).status).toBe(404);
    const internal = await stack.http.get(`/internal/v1/tasks/${taskId}`).use(stack.as('eve'));
    expect(internal.body).toMatchObject({
      subject: 'eve',
      kind: 'image',
      business_threshold: 0.8,
      lower_bound: 0.25,
    });
    const stop = await stack.http.post(`/v1/vision/tasks/${taskId}/stop`).use(stack.as('eve'));
    expect(stop.status).toBe(409);
    const listed = await stack.http.get('/v1/vision/tasks?kind=image').use(stack.as('eve'));
    expect(listed.body.items.filter((t: { task_id: string }) => t.task_id === taskId)).toHaveLength(1);
  });

  test('a later record of the same image call replaces its summary; an older one, another subject or another call cannot', async () => {
    const first = imageRecord({ results_summary: { images: 2, succeeded: 2, failed: 0 } });
    const taskId = first.task_id;
    await publishRecord(first);
    // Quota did not grant the images: the images service publishes the outcome again.
    const rewritten = {
      ...first,
      results_summary: { images: 2, succeeded: 0, failed: 2 },
      updated_at: new Date().toISOString(),
    };
    await publishRecord(rewritten);
    await waitFor(async () => (await adminView(taskId)).updated_at === rewritten.updated_at);
    expect(await adminView(taskId)).toMatchObject({
      results_summary: rewritten.results_summary,
      created_at: first.created_at,
    });
    // The first record delivered again, another subject, another call of the same subject: all left alone.
    await publishRecord(first);
    await publishRecord({
      ...rewritten,
      subject: 'zed',
      results_summary: { images: 2, succeeded: 2, failed: 0 },
    });
    await publishRecord({
      ...rewritten,
      request_id: randomUUID(),
      results_summary: { images: 9, succeeded: 9, failed: 0 },
    });
    // Not a record at all: skipped, the partition goes on.
    await stack.bus.publish(TOPICS.imageCalls, [
      { key: taskId, value: { schema: 1, type: 'image_call.recorded' } },
    ]);
    // A marker on the same key (one partition, in order): once it is stored, everything before it was handled.
    const marker = imageRecord({ task_id: taskId + '-m' });
    await stack.bus.publish(TOPICS.imageCalls, [
      { key: taskId, value: { schema: 1, event_id: randomUUID(), type: 'image_call.recorded', ...marker } },
    ]);
    await waitFor(async () => (await adminView(marker.task_id)).task_id === marker.task_id);
    expect(await adminView(taskId)).toMatchObject({
      subject: 'eve',
      results_summary: rewritten.results_summary,
      updated_at: rewritten.updated_at,
    });
  });
});

describe('an upload whose create fails after the task row was written', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      env: { TASKS_RECOVER_AFTER_MS: '1000', TASKS_RECONCILE_INTERVAL_MS: '600000' },
    });
  });
  afterAll(() => stack.close());

  test('keeps the object, so that recovery submits a job whose video exists', async () => {
    // A store failure right after the backend accepted the job (fault injected into the real store).
    const store = stack.tasks.store;
    const move = store.move.bind(store);
    let injected = false;
    store.move = async (...args: Parameters<typeof move>) => {
      if (!injected && args[1] === 'submission_accepted') {
        injected = true;
        throw new Error('database went away');
      }
      return move(...args);
    };
    try {
      const r = await upload(stack, 'ida', MP4, 'a.mp4');
      expect(r.status).toBeGreaterThanOrEqual(500);
    } finally {
      store.move = move;
    }
    expect(injected).toBe(true);
    const [job] = [...stack.inference.jobs.values()];
    const key = (job.source as { key: string }).key;
    expect(stack.objectFiles()).toHaveLength(1);
    expect(stack.objectFiles()[0].endsWith(key)).toBe(true);

    await new Promise((res) => setTimeout(res, 5));
    await stack.tasks.workers.recoverSubmitting();
    await waitFor(async () => (await store.get(job.job_id))?.status === 'running', 3000);
    expect(stack.objectFiles()).toHaveLength(1);
    expect(await quotaUsed(stack, 'ida')).toBe(1);
  });
});

describe('backend failures', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      env: {
        TASKS_MAX_ACTIVE: '50',
        TASKS_BREAKER_VOLUME: '10',
        TASKS_BREAKER_ERROR_PERCENT: '50',
        TASKS_BREAKER_RESET_MS: '1500',
        TASKS_BACKEND_TIMEOUT_MS: '700',
        TASKS_RESOLVE_GRACE_MS: '0',
        TASKS_RECONCILE_INTERVAL_MS: '600000',
      },
      quotaDaily: 50,
    });
  });
  afterAll(() => stack.close());

  test('timeouts leave the task resolving (202, charged); the reconciler settles both ways', async () => {
    const moved = async (from: string, to: string) =>
      (await metrics.taskTransitions.family.get()).values.find(
        (v) => v.labels.from === from && v.labels.to === to,
      )?.value ?? 0;
    const pairs = [
      ['submitting', 'resolving'],
      ['resolving', 'running'],
      ['resolving', 'refunded'],
    ] as const;
    const movedBefore = await Promise.all(pairs.map(([from, to]) => moved(from, to)));
    stack.inference.behaviour.submit = 'hang_after_create';
    const created = await createUrl(stack, 'fox');
    stack.inference.behaviour.submit = 'hang';
    const lost = await createUrl(stack, 'fox');
    stack.inference.behaviour.submit = 'accept';
    for (const r of [created, lost]) {
      expect(r.status).toBe(202);
      expect(r.body.status).toBe('resolving');
    }
    expect(await quotaUsed(stack, 'fox')).toBe(2);
    // vision_tasks reads the database at scrape time: both are resolving.
    expect(
      (await metricsRegistry.getSingleMetricAsString('vision_tasks')).match(
        /status="resolving"\} (\d+)/,
      )?.[1],
    ).toBe('2');
    await stack.tasks.workers.reconcileResolving();
    const a = await stack.http.get(`/v1/vision/tasks/${created.body.task_id}`).use(stack.as('fox'));
    const b = await stack.http.get(`/v1/vision/tasks/${lost.body.task_id}`).use(stack.as('fox'));
    expect(a.body.status).toBe('running');
    expect(b.body.status).toBe('refunded');
    expect(await quotaUsed(stack, 'fox')).toBe(1);
    // vision_task_transitions_total counted each move once.
    const movedAfter = await Promise.all(pairs.map(([from, to]) => moved(from, to)));
    expect(movedAfter.map((n, i) => n - movedBefore[i])).toEqual([2, 1, 1]);
  });

  test('operator verification of resolving tasks, with its own credential', async () => {
    stack.inference.behaviour.submit = 'hang';
    const one = await createUrl(stack, 'gil');
    const two = await createUrl(stack, 'gil');
    stack.inference.behaviour.submit = 'accept';
    const admin = (id: string, created: boolean, token = ADMIN_TOKEN) =>
      request(stack.tasks.url)
        .post(`/internal/v1/admin/tasks/${id}/verify`)
        .set('Authorization', `Bearer ${token}`)
        .send({ created });
    expect((await admin(one.body.task_id, true, 'wrong-token-wrong-token')).status).toBe(401);
    const customer = await request(stack.tasks.url)
      .post(`/internal/v1/admin/tasks/${one.body.task_id}/verify`)
      .use(stack.as('gil'))
      .send({ created: true });
    expect(customer.status).toBe(401);
    expect((await admin(one.body.task_id, true)).body.status).toBe('running');
    expect((await admin(two.body.task_id, false)).body.status).toBe('refunded');
    expect((await admin(two.body.task_id, true)).status).toBe(400);
    expect(await quotaUsed(stack, 'gil')).toBe(1);
  });

  test('breaker opens after failures, answers OP-TASK-BREAKER-OPEN without charging, closes after reset', async () => {
    const port = stack.inference.port;
    await stack.inference.close();
    let failures = 0;
    let open: Awaited<ReturnType<typeof createUrl>> | undefined;
    for (let i = 0; i < 20 && !open; i++) {
      const r = await createUrl(stack, 'hal');
      expect(r.status).toBe(503);
      if (r.body.error.code === 'OP-TASK-BREAKER-OPEN') open = r;
      else {
        expect(r.body.error.code).toBe('OP-TASK-UPSTREAM-DOWN');
        failures++;
      }
    }
    expect(open?.body.error.details.reason).toBe(REASON.breaker_open);
    // Come back when the probe call is due.
    expect(Number(open?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(failures).toBeGreaterThan(0);
    expect(await quotaUsed(stack, 'hal')).toBe(0);
    expect((await stack.http.get('/v1/vision/tasks').use(stack.as('hal'))).body.items).toEqual([]);

    await stack.inference.listen(port);
    // Its reset time passes: the next call is the probe, this test's or the job poller's (which may close it first).
    await waitFor(async () => stack.tasks.parts.inference.state() !== 'open');
    const ok = await createUrl(stack, 'hal');
    expect(ok.status).toBe(201);
    expect(stack.tasks.parts.inference.state()).toBe('closed');
    expect(await quotaUsed(stack, 'hal')).toBe(1);
  });

  test('maintenance switch answers OP-TASK-BREAKER-OPEN', async () => {
    const put = (enabled: boolean) =>
      request(stack.tasks.url)
        .put('/internal/v1/admin/maintenance')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .send({ enabled });
    expect((await put(true)).body.enabled).toBe(true);
    const r = await createUrl(stack, 'ivy');
    expect(r.status).toBe(503);
    expect(r.body.error).toMatchObject({
      code: 'OP-TASK-BREAKER-OPEN',
      details: { reason: REASON.maintenance },
    });
    await put(false);
    expect((await createUrl(stack, 'ivy')).status).toBe(201);
  });
});

describe('following the backend, stop, retention', () => {
  test('poller: ended jobs end tasks; a lost job is started again, past the earlier seqs for a stream', async () => {
    const stack = await startStack({ env: { TASKS_RESOLVE_GRACE_MS: '0' } });
    try {
      const a = await createUrl(stack, 'jo');
      const b = await createUrl(stack, 'jo');
      stack.inference.jobs.get(a.body.task_id)!.status = 'succeeded';
      stack.inference.jobs.delete(b.body.task_id);
      const status = (id: string) =>
        stack.http
          .get(`/v1/vision/tasks/${id}`)
          .use(stack.as('jo'))
          .then((r) => r.body as { status: string; reason?: string });
      await waitFor(async () => (await status(a.body.task_id)).status === 'succeeded');
      // The backend forgot b's job: it is started again with the same job id, at the next run's first seq.
      const again = await waitFor(async () => stack.inference.jobs.get(b.body.task_id));
      expect(again).toMatchObject({ status: 'running', first_seq: 2 ** 28 });
      expect((await status(b.body.task_id)).status).toBe('running');
      stack.inference.jobs.delete(b.body.task_id);
      expect(await waitFor(async () => stack.inference.jobs.get(b.body.task_id)?.first_seq)).toBe(
        2 * 2 ** 28,
      );
      expect(await quotaUsed(stack, 'jo')).toBe(2);
      const stop = await stack.http.post(`/v1/vision/tasks/${a.body.task_id}/stop`).use(stack.as('jo'));
      expect(stop.status).toBe(409);
      expect(stop.body.error.code).toBe('OP-TASK-NOT-STOPPABLE');
    } finally {
      await stack.close();
    }
  });

  test('a lost file job starts again from its first frame; once its restarts are spent, the task is refunded', async () => {
    const stack = await startStack({ env: { TASKS_RESOLVE_GRACE_MS: '0', TASKS_JOB_RESTARTS: '1' } });
    try {
      const created = await upload(stack, 'kim', MP4, 'clip.mp4');
      expect(created.status).toBe(201);
      const id = created.body.task_id as string;
      await waitFor(async () => stack.inference.jobs.get(id)?.status === 'running');
      stack.inference.jobs.delete(id);
      const again = await waitFor(async () => stack.inference.jobs.get(id));
      expect(again.first_seq).toBe(0);
      expect(again.source).toMatchObject({ type: 'object' });
      stack.inference.jobs.delete(id);
      const ended = await waitFor(async () => {
        const r = await stack.http.get(`/v1/vision/tasks/${id}`).use(stack.as('kim'));
        return r.body.status === 'refunded' && (r.body as { reason: string });
      });
      expect(ended.reason).toBe('backend_lost_job: the inference backend lost the job');
      expect(stack.inference.jobs.has(id)).toBe(false);
      expect(await quotaUsed(stack, 'kim')).toBe(0);
    } finally {
      await stack.close();
    }
  });

  test('a job aborted by its backend shutting down waits for the next backend, where it starts again', async () => {
    const stack = await startStack({ env: { TASKS_RESOLVE_GRACE_MS: '0' } });
    try {
      const created = await createUrl(stack, 'lu');
      const id = created.body.task_id as string;
      const job = stack.inference.jobs.get(id)!;
      job.status = 'failed';
      job.reason = 'backend_shutdown: the inference backend shut down';
      const submits = stack.inference.submits;
      const polls = stack.inference.polls;
      await waitFor(async () => stack.inference.polls >= polls + 4); // four polls saw it failed
      const during = await stack.http.get(`/v1/vision/tasks/${id}`).use(stack.as('lu'));
      expect(during.body.status).toBe('running');
      expect(stack.inference.submits).toBe(submits);
      stack.inference.jobs.delete(id); // the next backend does not know it
      expect(await waitFor(async () => stack.inference.jobs.get(id)?.first_seq)).toBe(2 ** 28);
      expect(await quotaUsed(stack, 'lu')).toBe(1);
    } finally {
      await stack.close();
    }
  });

  test("a job that failed on our side is refunded once; one that failed on the caller's side stays charged", async () => {
    const stack = await startStack({ env: { TASKS_POLL_INTERVAL_MS: '100' } });
    try {
      const ours = await createUrl(stack, 'ned');
      const crashed = await createUrl(stack, 'ned');
      const theirs = await createUrl(stack, 'ned');
      expect(await quotaUsed(stack, 'ned')).toBe(3);
      const fail = (id: string, reason: string) =>
        Object.assign(stack.inference.jobs.get(id)!, { status: 'failed', reason });
      fail(ours.body.task_id, 'internal_error: internal error');
      fail(crashed.body.task_id, 'decoder_unavailable: the video decoder is unavailable (crashed 3 times)');
      fail(
        theirs.body.task_id,
        'stream_lost: the stream was lost and did not come back in time (after 30000 ms, stream_unreachable)',
      );
      const status = (id: string) =>
        stack.http
          .get(`/v1/vision/tasks/${id}`)
          .use(stack.as('ned'))
          .then((r) => r.body as { status: string; reason?: string });
      const ended = (id: string) =>
        waitFor(async () => {
          const t = await status(id);
          return ['refunded', 'failed'].includes(t.status) && t;
        });
      expect(await ended(ours.body.task_id)).toEqual(
        expect.objectContaining({ status: 'refunded', reason: 'internal_error: internal error' }),
      );
      expect(await ended(crashed.body.task_id)).toEqual(
        expect.objectContaining({
          status: 'refunded',
          reason: 'decoder_unavailable: the video decoder is unavailable (crashed 3 times)',
        }),
      );
      expect((await ended(theirs.body.task_id)).status).toBe('failed');
      // Charged three times, refunded twice, and not again in later poll rounds.
      expect(await quotaUsed(stack, 'ned')).toBe(1);
      await new Promise((r) => setTimeout(r, 600));
      expect(await quotaUsed(stack, 'ned')).toBe(1);
      expect((await status(ours.body.task_id)).status).toBe('refunded');
    } finally {
      await stack.close();
    }
  });

  test('stop: confirmed stop answers stopped; a pending stop survives a restart of the tasks service', async () => {
    const stack = await startStack({ env: { TASKS_STOP_WAIT_MS: '800' } });
    try {
      const t1 = await createUrl(stack, 'kit');
      const s1 = await stack.http.post(`/v1/vision/tasks/${t1.body.task_id}/stop`).use(stack.as('kit'));
      expect(s1.status).toBe(200);
      expect(s1.body.status).toBe('stopped');
      expect(
        (await stack.http.post(`/v1/vision/tasks/${t1.body.task_id}/stop`).use(stack.as('mallory'))).status,
      ).toBe(404);

      const t2 = await createUrl(stack, 'kit');
      stack.inference.behaviour.stop = 'error500';
      const s2 = await stack.http.post(`/v1/vision/tasks/${t2.body.task_id}/stop`).use(stack.as('kit'));
      expect(s2.body.status).toBe('stopping');
      await stack.restartTasks();
      expect(
        (await stack.http.get(`/v1/vision/tasks/${t2.body.task_id}`).use(stack.as('kit'))).body.status,
      ).toBe('stopping');
      stack.inference.behaviour.stop = 'confirm';
      await waitFor(async () => {
        const r = await stack.http.get(`/v1/vision/tasks/${t2.body.task_id}`).use(stack.as('kit'));
        return r.body.status === 'stopped';
      });
      expect(stack.inference.jobs.get(t2.body.task_id)?.status).toBe('stopped');
    } finally {
      await stack.close();
    }
  });

  test('stop on a resolving task is remembered and carried out once it runs', async () => {
    const stack = await startStack({
      env: { TASKS_BACKEND_TIMEOUT_MS: '500', TASKS_RECONCILE_INTERVAL_MS: '600000' },
    });
    try {
      stack.inference.behaviour.submit = 'hang_after_create';
      const t = await createUrl(stack, 'lou');
      stack.inference.behaviour.submit = 'accept';
      expect(t.body.status).toBe('resolving');
      const s = await stack.http.post(`/v1/vision/tasks/${t.body.task_id}/stop`).use(stack.as('lou'));
      expect(s.status).toBe(202);
      expect(s.body.status).toBe('resolving');
      await stack.tasks.workers.reconcileResolving();
      await waitFor(async () => {
        const r = await stack.http.get(`/v1/vision/tasks/${t.body.task_id}`).use(stack.as('lou'));
        return r.body.status === 'stopped';
      });
    } finally {
      await stack.close();
    }
  });

  test('janitor: 90 days after creation the uploaded video is deleted and the task expires', async () => {
    const clock = new FakeClock(new Date());
    const stack = await startStack({ clock });
    try {
      const t = await upload(stack, 'max', MP4, 'a.mp4');
      expect(t.status).toBe(201);
      await stack.http.post(`/v1/vision/tasks/${t.body.task_id}/stop`).use(stack.as('max'));
      expect(stack.objectFiles()).toHaveLength(1);
      clock.advance(89 * 86_400_000);
      expect(await stack.tasks.workers.expireTasks()).toBe(0);
      expect(stack.objectFiles()).toHaveLength(1);
      clock.advance(2 * 86_400_000);
      expect(await stack.tasks.workers.expireTasks()).toBe(1);
      expect(stack.objectFiles()).toHaveLength(0);
      expect((await stack.http.get(`/v1/vision/tasks/${t.body.task_id}`).use(stack.as('max'))).status).toBe(
        404,
      );
    } finally {
      await stack.close();
    }
  });
});
