/**
 * The video job capacity of several job-running inference replicas (docs/ARCHITECTURE.md, "Who runs a video job";
 * docs/OVERLOAD.md, "Capacity and fair share"), seen through the public API: two replicas of one job slot each
 * behind one address. A new job goes to a replica with room wherever tasks sent it, a live task is refused at
 * capacity (503, nothing charged) only once both are full, and the slots tasks shares out are the sum over the live
 * replicas: a file task starts beside a running live task while both replicas run (the configured figure, one
 * slot, would queue it), waits in the queue while one replica is stopped, and starts once it is back.
 */
import { streamServer, streamUrls, type StreamServer } from '../helpers/stream-servers';
import type { DistributedStack } from '../helpers/distributed';
import {
  client,
  clip,
  describeDistributed,
  expectChargesMatchTasks,
  expectUnavailable,
  sleep,
  startFaultStack,
} from './support';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

keepClearOfQuotaDayTurn();

const FILE = clip('pedestrians_vtest_opencv.mp4');

describeDistributed('video job capacity over two job-running replicas', () => {
  let stack: DistributedStack;
  let rtsp: StreamServer;
  beforeAll(async () => {
    rtsp = await streamServer('rtsp');
    await rtsp.start();
    stack = await startFaultStack({
      replicas: { inference: 2 },
      env: {
        QUOTA_VIDEO_DAILY: '50',
        TASKS_MAX_ACTIVE: '20',
        // One slot a replica, and the same figure as the configured capacity tasks starts from (one process or
        // one environment for both): only inference's report of its live replicas makes it two.
        INFERENCE_MAX_JOBS: '1',
        // Jobs stay where they are placed: a scale-out's moves are inference-replicas' subject.
        INFERENCE_REBALANCE: 'false',
        INFERENCE_SAMPLE_FPS: '1',
        TASKS_POLL_INTERVAL_MS: '300',
        STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
      },
    });
  }, 240_000);
  afterAll(async () => {
    await stack?.close();
    await rtsp?.stop();
  });

  it('places jobs on the replica with room, refuses only when all are full, and shares the sum of the live ones', async () => {
    const c = client(stack);
    const url = streamUrls(rtsp).rtsp;
    const live = async () => {
      const r = await c.createByUrl(url);
      expect({ status: r.status, body: r.body }).toMatchObject({ status: 201, body: { status: 'running' } });
      return r.body.task_id as string;
    };

    // Two live jobs fill the two replicas, whichever replica each submission reached.
    const first = await live();
    const second = await live();
    for (const id of [first, second]) expect((await c.task(id)).body.status).toBe('running');

    // Both full: a third is refused as at capacity, and charged nothing.
    const used = (await c.quota()).used;
    const refused = await c.createByUrl(url);
    expectUnavailable(refused, ['OP-TASK-UPSTREAM-DOWN']);
    expect(refused.body.error.message).toMatch(/at capacity/);
    expect((await c.quota()).used).toBe(used);

    // One live job leaves: a file task starts beside the other at once, in the slot of the second replica.
    expect((await c.api('POST', `/v1/vision/tasks/${second}/stop`)).status).toBe(200);
    await c.waitForStatus(second, ['stopped'], 60_000);
    const file = await c.upload(FILE);
    expect(file.status).toBe(201);
    await c.waitForStatus(file.body.task_id, ['running', 'succeeded'], 60_000);
    await c.waitForStatus(file.body.task_id, ['succeeded'], 300_000);

    // One replica stops (the live job, wherever it ran, goes on at the other): one slot is left, and it is taken.
    await stack.kill('inference', { signal: 'SIGTERM', index: 1 });
    await sleep(3000);
    expect((await c.task(first)).body.status).toBe('running');
    const stillFull = await c.createByUrl(url);
    expectUnavailable(stillFull, ['OP-TASK-UPSTREAM-DOWN']);
    // A file task waits in the queue (201, submitting) while the one replica left is full.
    const queued = await c.upload(FILE);
    expect({ status: queued.status, task: queued.body.status }).toEqual({ status: 201, task: 'submitting' });
    await sleep(5000);
    expect((await c.task(queued.body.task_id)).body.status).toBe('submitting');

    // The replica is back: its slot is shared out again, and the waiting file task starts in it.
    await stack.restart('inference', { index: 1 });
    await c.waitForStatus(queued.body.task_id, ['running', 'succeeded'], 60_000);
    expect((await c.task(first)).body.status).toBe('running');

    expect((await c.api('POST', `/v1/vision/tasks/${first}/stop`)).status).toBe(200);
    await c.waitForStatus(first, ['stopped'], 60_000);
    await c.waitForStatus(queued.body.task_id, ['succeeded'], 300_000);
    const tasks = await c.tasks();
    expect(tasks.map((t) => t.status).sort()).toEqual(['stopped', 'stopped', 'succeeded', 'succeeded']);
    await expectChargesMatchTasks(c);
  }, 600_000);
});
