import { startMediaServer, type MediaServer } from '../helpers/media-server';
import type { DistributedStack } from '../helpers/distributed';
import {
  client,
  clip,
  describeDistributed,
  expectChargesMatchTasks,
  expectUnavailable,
  sleep,
  startFaultStack,
  waitAllTerminal,
  waitFor,
} from './support';

describeDistributed('fault: the inference backend is killed while tasks run', () => {
  let stack: DistributedStack;
  let media: MediaServer;
  beforeAll(async () => {
    stack = await startFaultStack({
      env: {
        QUOTA_VIDEO_DAILY: '100',
        TASKS_MAX_ACTIVE: '20',
        TASKS_BREAKER_VOLUME: '2',
        TASKS_BREAKER_RESET_MS: '3000',
        TASKS_BACKEND_TIMEOUT_MS: '3000',
        TASKS_POLL_INTERVAL_MS: '300',
        TASKS_RECONCILE_INTERVAL_MS: '500',
      },
    });
    media = await startMediaServer({ 'pedestrians.mov': clip('pedestrians_vtest_opencv_10s.mov') });
  }, 180_000);
  afterAll(async () => {
    await media?.close();
    await stack?.close();
  });

  it('fails creations fast once the breaker opens, recovers, and leaves no task unfinished or charged twice', async () => {
    const c = client(stack);
    const live = `${media.url}/live/pedestrians.mov`;
    const running: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await c.createByUrl(live);
      expect(r.status).toBe(201);
      running.push(r.body.task_id);
    }
    expect((await c.quota()).used).toBe(2);

    await stack.kill('inference', { signal: 'SIGKILL' });

    // Creations now fail with 503 (backend down), and once the breaker is open, with OP-TASK-BREAKER-OPEN.
    const codes: string[] = [];
    for (let i = 0; i < 15 && !codes.includes('OP-TASK-BREAKER-OPEN'); i++) {
      const r = await c.createByUrl(live);
      expectUnavailable(r, ['OP-TASK-UPSTREAM-DOWN', 'OP-TASK-BREAKER-OPEN']);
      codes.push(r.body.error.code);
    }
    expect(codes).toContain('OP-TASK-BREAKER-OPEN');
    // While it is open, a creation is refused before anything is charged.
    const open = await c.createByUrl(live);
    expectUnavailable(open, ['OP-TASK-BREAKER-OPEN']);
    expect((await c.quota()).used).toBe(2);

    await stack.restart('inference');

    // The breaker closes again after its reset time: a creation succeeds.
    const resumed = await waitFor(
      'a creation to succeed after the backend came back',
      async () => {
        const r = await c.createByUrl(live);
        if (r.status === 201) return r.body as { task_id: string };
        expectUnavailable(r, ['OP-TASK-UPSTREAM-DOWN', 'OP-TASK-BREAKER-OPEN']);
        await sleep(500);
        return undefined;
      },
      60_000,
    );
    const stop = await c.api('POST', `/v1/vision/tasks/${resumed.task_id}/stop`);
    expect(stop.status).toBe(200);

    // The tasks that ran when the backend died end with a reason (their jobs are gone); none is left running.
    await waitAllTerminal(c);
    for (const id of running) {
      const t = await c.task(id);
      expect(['failed', 'succeeded', 'stopped']).toContain(t.body.status);
    }
    await expectChargesMatchTasks(c);
    expect((await c.tasks()).length).toBe(3);
  }, 300_000);
});
