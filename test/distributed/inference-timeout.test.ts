import { randomUUID } from 'node:crypto';
import type { DistributedStack } from '../helpers/distributed';
import { startMediaServer, type MediaServer } from '../helpers/media-server';
import {
  client,
  clip,
  describeDistributed,
  expectChargesMatchTasks,
  startFaultStack,
  waitFor,
} from './support';

describeDistributed('fault: the inference backend answers after the timeout', () => {
  let stack: DistributedStack;
  let media: MediaServer;
  beforeAll(async () => {
    stack = await startFaultStack({
      toxiproxy: true,
      env: {
        TASKS_BACKEND_TIMEOUT_MS: '1000',
        TASKS_RECONCILE_INTERVAL_MS: '500',
        TASKS_POLL_INTERVAL_MS: '300',
        TASKS_RESOLVE_GRACE_MS: '3000',
        TASKS_BREAKER_VOLUME: '50',
        // The scene list is fetched from inference too: keep the copy fetched below for the whole test.
        TASKS_SCENES_CACHE_MS: '600000',
      },
    });
    media = await startMediaServer({ 'pedestrians.mov': clip('pedestrians_vtest_opencv_10s.mov') });
    const warm = await client(stack).createByUrl(`${media.url}/file/pedestrians.mov`);
    expect(warm.status).toBe(201);
  }, 180_000);
  afterAll(async () => {
    await media?.close();
    await stack?.close();
  });

  it('answers 202 resolving when the acceptance arrives late; the reconciler settles it as created', async () => {
    const c = client(stack);
    const before = (await c.quota()).used;
    const idem = randomUUID();
    // The backend receives the submission at once, but its answer comes back after the 1 s timeout.
    await stack.addToxic('inference', {
      name: 'slow-answer',
      type: 'latency',
      stream: 'downstream',
      attributes: { latency: 2500, jitter: 0 },
    });
    let created;
    try {
      created = await c.createByUrl(`${media.url}/live/pedestrians.mov`, idem);
    } finally {
      await stack.removeToxic('inference', 'slow-answer');
    }
    expect([created.status, created.body?.error?.code]).toEqual([202, undefined]);
    expect(created.body.status).toBe('resolving');
    const id = created.body.task_id as string;
    expect((await c.quota()).used).toBe(before + 1);

    const settled = await c.waitForStatus(
      id,
      ['running', 'succeeded', 'failed', 'stopped', 'refunded'],
      60_000,
    );
    expect(settled.status).toBe('running');
    // A replay returns the same task and charges nothing more.
    const replay = await c.createByUrl(`${media.url}/live/pedestrians.mov`, idem);
    expect(replay.status).toBe(200);
    expect(replay.body.task_id).toBe(id);
    expect((await c.quota()).used).toBe(before + 1);
    await waitFor('frames of the settled task', async () => {
      const r = await c.api('GET', `/v1/vision/tasks/${id}/results?limit=10`);
      return r.body.items.length > 0 ? true : undefined;
    });
    expect((await c.api('POST', `/v1/vision/tasks/${id}/stop`)).status).toBe(200);
    await c.waitForStatus(id, ['stopped']);
  }, 180_000);

  it('answers 202 resolving when the submission never arrives; the reconciler refunds it', async () => {
    const c = client(stack);
    const before = (await c.quota()).used;
    // Nothing gets through to the backend; the connection is closed after 1.5 s.
    await stack.addToxic('inference', {
      name: 'black-hole',
      type: 'timeout',
      stream: 'upstream',
      attributes: { timeout: 1500 },
    });
    let created;
    try {
      created = await c.createByUrl(`${media.url}/live/pedestrians.mov`);
    } finally {
      await stack.removeToxic('inference', 'black-hole');
    }
    expect([created.status, created.body?.error?.code]).toEqual([202, undefined]);
    expect(created.body.status).toBe('resolving');
    const id = created.body.task_id as string;
    expect((await c.quota()).used).toBe(before + 1);
    const settled = await c.waitForStatus(id, ['running', 'refunded', 'failed'], 60_000);
    expect(settled.status).toBe('refunded');
    expect((await c.quota()).used).toBe(before);
    await expectChargesMatchTasks(c);
  }, 180_000);
});
