/**
 * Charges and refunds that cross a slow peer: a recovered task whose charge was refunded must not run
 * for free, and a job a slow backend creates after its resolving task was refunded is stopped.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { type Stack, quotaUsed, startClipServer, startStack, waitFor } from './harness';

let clips: Awaited<ReturnType<typeof startClipServer>>;
beforeAll(async () => {
  clips = await startClipServer();
});
afterAll(async () => {
  await clips.close();
});

describe('recovery of a submitting task whose charge was refunded', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      env: { TASKS_RECOVER_AFTER_MS: '0', TASKS_RECONCILE_INTERVAL_MS: '600000' },
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
          .set(stack.as('ned'))
          .send({ charge_id: taskId, kind: 'video', units: 1 })
      ).status,
    ).toBe(201);
    expect((await q.post(`/internal/v1/charges/${taskId}/refund`).set(stack.as('ned'))).status).toBe(200);
    const ins = await stack.tasks.store.insertSubmitting(
      {
        task_id: taskId,
        subject: 'ned',
        request_id: randomUUID(),
        scene_code: 'ship',
        business_threshold: 0.8,
        lower_bound: 0.25,
        source_type: 'stream',
        stream_url: url,
        stream_url_redacted: url,
        retention_days: 90,
      },
      { key: randomUUID(), fingerprint: 'fp' },
      10,
    );
    expect(ins.kind).toBe('created');
    await new Promise((r) => setTimeout(r, 5)); // strictly older than "now" for the recovery query

    // (the reconciler's own first round may be the one that takes it: either way it is recovered once)
    await stack.tasks.engine.recoverSubmitting();
    await waitFor(async () => (await stack.tasks.store.get(taskId))?.status !== 'submitting', 3000);
    expect((await stack.tasks.store.get(taskId))?.status).toBe('refunded');
    expect(stack.inference.jobs.has(taskId)).toBe(false);
    expect(await quotaUsed(stack, 'ned')).toBe(0);
  });
});
