import { randomUUID } from 'node:crypto';
import type { DistributedStack } from '../helpers/distributed';
import { startMediaServer, type MediaServer } from '../helpers/media-server';
import {
  client,
  clip,
  describeDistributed,
  expectChargesMatchTasks,
  startFaultStack,
  TERMINAL,
  waitFor,
} from './support';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

describeDistributed('fault: the tasks process is SIGKILLed between charging and submitting', () => {
  let stack: DistributedStack;
  let media: MediaServer;
  beforeAll(async () => {
    stack = await startFaultStack({
      toxiproxy: true,
      env: {
        TASKS_BACKEND_TIMEOUT_MS: '30000',
        TASKS_BREAKER_HANG_MS: '30000',
        TASKS_RECOVER_AFTER_MS: '1000',
        TASKS_RECONCILE_INTERVAL_MS: '500',
        TASKS_POLL_INTERVAL_MS: '300',
        TASKS_SCENES_CACHE_MS: '600000',
      },
    });
    media = await startMediaServer({ 'pedestrians.mov': clip('pedestrians_vtest_opencv_10s.mov') });
  }, 180_000);
  afterAll(async () => {
    await media?.close();
    await stack?.close();
  });

  it('after the restart the task runs or is refunded, and is never charged twice', async () => {
    const c = client(stack);
    const live = `${media.url}/live/pedestrians.mov`;
    // Warm the scene list, then hold every request to the backend for 8 s: the submission waits
    // there while the charge is already made.
    const warm = await c.createByUrl(`${media.url}/file/pedestrians.mov`);
    expect(warm.status).toBe(201);
    await c.waitForStatus(warm.body.task_id, ['succeeded']);
    const before = (await c.quota()).used;
    await stack.addToxic('inference', {
      name: 'hold',
      type: 'latency',
      stream: 'upstream',
      attributes: { latency: 8000, jitter: 0 },
    });
    const idem = randomUUID();
    const pending = c.createByUrl(live, idem).catch((err: unknown) => err);
    await waitFor(
      'the charge',
      async () => ((await c.quota()).used === before + 1 ? true : undefined),
      30_000,
    );
    await stack.kill('tasks', { signal: 'SIGKILL' });
    const answer = await pending;
    // The caller got an error from the gateway (its upstream died), not a task.
    expect(answer).toHaveProperty('status');
    expect((answer as { status: number }).status).toBeGreaterThanOrEqual(500);
    await stack.removeToxic('inference', 'hold');

    await stack.restart('tasks');
    // The task left in `submitting` is taken over by recovery: submitted again (the backend
    // dedupes by job id) or refunded.
    const task = await waitFor(
      'the interrupted task to settle',
      async () => {
        const t = (await c.tasks()).find((x) => x.request_id === idem);
        return t && ['running', ...TERMINAL].includes(t.status) ? t : undefined;
      },
      60_000,
    );
    expect(['running', 'refunded']).toContain(task.status);
    expect((await c.quota()).used).toBe(task.status === 'refunded' ? before : before + 1);
    // A replay with the same key returns that task and charges nothing.
    const replay = await c.createByUrl(live, idem);
    expect(replay.status).toBe(200);
    expect(replay.body.task_id).toBe(task.task_id);
    expect((await c.quota()).used).toBe(task.status === 'refunded' ? before : before + 1);
    if (task.status === 'running') {
      expect((await c.api('POST', `/v1/vision/tasks/${task.task_id}/stop`)).status).toBe(200);
      await c.waitForStatus(task.task_id, ['stopped']);
    }
    await expectChargesMatchTasks(c);
  }, 240_000);
});
