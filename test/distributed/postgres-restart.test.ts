import { randomUUID } from 'node:crypto';
import type { DistributedStack } from '../helpers/distributed';
import { startMediaServer, type MediaServer } from '../helpers/media-server';
import type { ApiResponse } from '../helpers/stack';
import {
  client,
  clip,
  describeDistributed,
  expectChargesMatchTasks,
  sleep,
  startFaultStack,
  waitFor,
} from './support';

describeDistributed('fault: Postgres is restarted mid-run', () => {
  let stack: DistributedStack;
  let media: MediaServer;
  beforeAll(async () => {
    // A lease shorter than the outage: the live job's replica fences it, and must run it again afterwards.
    stack = await startFaultStack({
      env: { TASKS_POLL_INTERVAL_MS: '300', INFERENCE_LEASE_TTL_MS: '3000', INFERENCE_LEASE_BEAT_MS: '1000' },
    });
    media = await startMediaServer({ 'pedestrians.mov': clip('pedestrians_vtest_opencv_10s.mov') });
  }, 180_000);
  afterAll(async () => {
    await stack?.startServer('postgres').catch(() => undefined);
    await media?.close();
    await stack?.close();
  });

  it('answers 503 during the outage, writes nothing half, and recovers without a restart', async () => {
    const c = client(stack);
    const live = `${media.url}/live/pedestrians.mov`;
    const running = await c.createByUrl(live);
    expect(running.status).toBe(201);
    const id = running.body.task_id as string;
    await waitFor('live frames', async () => {
      const r = await c.api('GET', `/v1/vision/tasks/${id}/results?limit=10`);
      return r.body.items.length > 0 ? true : undefined;
    });

    await stack.stopServer('postgres');
    const outageKey = randomUUID();
    const during: ApiResponse[] = [
      await c.raw('GET', `/v1/vision/tasks/${id}`),
      await c.api('GET', '/v1/vision/quota'),
      await c.raw('GET', `/v1/vision/tasks/${id}/results?limit=10`),
      await c.createByUrl(live, outageKey),
      await c.upload(clip('person_bicycle_car_parkinglot_intel.mp4')),
    ];
    for (const r of during) {
      expect(r.status).toBe(503);
      expect(r.body.error.code).toBe('OP-SYS-UNAVAILABLE');
    }
    await sleep(4000);
    await stack.startServer('postgres');
    const restarted = Date.now();

    // The same processes serve again once their pools reconnect.
    await waitFor(
      'the API to answer again',
      async () => ((await c.raw('GET', `/v1/vision/tasks/${id}`)).status === 200 ? true : undefined),
      60_000,
    );
    // The live task, fenced during the outage, runs again: frames captured after it.
    await waitFor(
      'frames of the live task after the outage',
      async () => {
        const r = await c.api('GET', `/v1/vision/tasks/${id}/results?limit=500`);
        return r.body.items.some((f: { frame_time_ms: number }) => f.frame_time_ms > restarted)
          ? true
          : undefined;
      },
      60_000,
    );
    // The creation refused during the outage left nothing behind: its key starts a new task now.
    const retried = await c.createByUrl(live, outageKey);
    expect(retried.status).toBe(201);
    for (const t of [id, retried.body.task_id as string]) {
      expect((await c.api('POST', `/v1/vision/tasks/${t}/stop`)).status).toBe(200);
      await c.waitForStatus(t, ['stopped']);
    }
    const tasks = await c.tasks();
    expect(tasks.map((t) => t.task_id).sort()).toEqual([id, retried.body.task_id].sort());
    await expectChargesMatchTasks(c);
    // Frames of the task that ran through the outage: in order, none twice.
    const frames = await c.allFrames(id, 500);
    const times = frames.map((f) => f.frame_time_ms);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(new Set(frames.map((f) => f.frame_id)).size).toBe(frames.length);
  }, 300_000);
});
