/**
 * An image call's record and its `task.created` event are written by one statement; writing the record
 * again (the images service's rewrite of its outcome, or a replay) changes the summary at most and never
 * writes a second event.
 */
import { randomUUID } from 'node:crypto';
import { createLogger, FakeClock, openDb } from '@vision/shared';
import { migrations } from '../src/store/migrations';
import { TaskStore } from '../src/store/task-store';

// Opening in-memory PGlite and migrating takes a few seconds on a busy machine.
jest.setTimeout(120_000);

test('a new image record writes one task.created event; writing it again writes none', async () => {
  const db = await openDb(
    { VISION_MODE: 'standalone', DATABASE_URL: undefined, VISION_DATA_DIR: ':memory:' },
    { schema: 'tasks', migrations, logger: createLogger('tasks-test', { level: 'silent' }) },
  );
  try {
    const clock = new FakeClock(new Date('2026-11-24T05:00:00Z'));
    const store = new TaskStore(db.knex, clock);
    const record = {
      task_id: randomUUID(),
      subject: 'eve',
      request_id: randomUUID(),
      scene_code: 'ship',
      status: 'succeeded',
      business_threshold: 0.8,
      lower_bound: 0.25,
      results_summary: { images: 2, succeeded: 2, failed: 0 },
      retention_days: 7,
    };
    const first = await store.insertImageTask(record);
    expect(first.created).toBe(true);
    expect(first.task).toMatchObject({ task_id: record.task_id, kind: 'image', status: 'succeeded' });
    expect(first.task.result_expires_at).toEqual(new Date('2026-12-01T05:00:00Z'));

    const events = async () =>
      (await db.knex('outbox').select('topic', 'msg_key', 'value')).map((r) => ({
        ...r,
        value: typeof r.value === 'string' ? JSON.parse(r.value) : r.value,
      }));
    expect(await events()).toEqual([
      {
        topic: 'vision.task-events',
        msg_key: record.task_id,
        value: expect.objectContaining({
          type: 'task.created',
          task_id: record.task_id,
          subject: 'eve',
          kind: 'image',
          scene_code: 'ship',
          status: 'succeeded',
          business_threshold: 0.8,
          lower_bound: 0.25,
          result_expires_at: '2026-12-01T05:00:00.000Z',
          occurred_at: '2026-11-24T05:00:00.000Z',
          request_id: record.request_id,
          images: { total: 2, succeeded: 2, failed: 0 },
        }),
      },
    ]);

    // The images service writes the outcome again: the summary changes, no event is added.
    const again = await store.insertImageTask({
      ...record,
      status: 'failed',
      results_summary: { images: 2, succeeded: 0, failed: 2 },
    });
    expect(again.created).toBe(false);
    expect(again.task).toMatchObject({
      status: 'failed',
      results_summary: { images: 2, succeeded: 0, failed: 2 },
    });
    // Another subject's write with the same id leaves it alone.
    const other = await store.insertImageTask({ ...record, subject: 'zed' });
    expect(other).toMatchObject({ created: false, task: { subject: 'eve', status: 'failed' } });
    expect(await events()).toHaveLength(1);
    const [{ n }] = await db.knex('tasks').count<{ n: string }[]>({ n: '*' });
    expect(Number(n)).toBe(1);
  } finally {
    await db.close();
  }
});

test('a status change event names the status it left and, on a failure, the reason code', async () => {
  const db = await openDb(
    { VISION_MODE: 'standalone', DATABASE_URL: undefined, VISION_DATA_DIR: ':memory:' },
    { schema: 'tasks', migrations, logger: createLogger('tasks-test', { level: 'silent' }) },
  );
  try {
    const clock = new FakeClock(new Date('2026-11-24T05:00:00Z'));
    const store = new TaskStore(db.knex, clock);
    const taskId = randomUUID();
    const requestId = randomUUID();
    await db.knex('tasks').insert({
      task_id: taskId,
      subject: 'eve',
      kind: 'video',
      source_type: 'stream',
      request_id: requestId,
      scene_code: 'ship',
      status: 'submitting',
      business_threshold: 0.8,
      lower_bound: 0.25,
      created_at: clock.now(),
      updated_at: clock.now(),
      result_expires_at: new Date('2027-02-22T05:00:00Z'),
    });
    await store.move(taskId, 'submission_accepted');
    await store.move(taskId, 'job_failed', {
      reason: 'stream_lost: the stream was lost and did not come back in time',
    });
    const values = (await db.knex('outbox').orderBy('id').select('value')).map((r) =>
      typeof r.value === 'string' ? JSON.parse(r.value) : r.value,
    );
    expect(values).toEqual([
      expect.objectContaining({
        type: 'task.created',
        status: 'running',
        previous_status: 'submitting',
        request_id: requestId,
      }),
      expect.objectContaining({
        type: 'task.status_changed',
        status: 'failed',
        previous_status: 'running',
        reason: 'stream_lost',
      }),
    ]);
    expect(values[0].reason).toBeUndefined();
  } finally {
    await db.close();
  }
});
