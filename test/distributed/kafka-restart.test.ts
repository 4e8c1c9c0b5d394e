import type { DistributedStack } from '../helpers/distributed';
import { startMediaServer, type MediaServer } from '../helpers/media-server';
import { awaitObservabilityBackends, waitForProm } from '../helpers/observability';
import {
  client,
  clip,
  describeDistributed,
  expectSucceededWithEveryFrameOnce,
  startFaultStack,
  waitFor,
} from './support';

const LONG = clip('pedestrians_vtest_opencv.mp4'); // 79.7 s: several hundred frames at 5 fps

// It reads series: it starts once the stack runs Jaeger and Prometheus.
awaitObservabilityBackends();

describeDistributed('fault: the Kafka broker is restarted while a file task publishes frames', () => {
  let stack: DistributedStack;
  let media: MediaServer;
  beforeAll(async () => {
    stack = await startFaultStack({ env: { TASKS_POLL_INTERVAL_MS: '300' } });
    media = await startMediaServer({ 'pedestrians.mov': clip('pedestrians_vtest_opencv_10s.mov') });
  }, 180_000);
  afterAll(async () => {
    await stack?.startServer('kafka').catch(() => undefined);
    await media?.close();
    await stack?.close();
  });

  it('keeps every frame exactly once and in order', async () => {
    const c = client(stack);
    // Reference: the same file without a fault.
    const ref = await c.upload(LONG);
    expect(ref.status).toBe(201);
    expect((await c.waitForStatus(ref.body.task_id, ['succeeded', 'failed'], 240_000)).status).toBe(
      'succeeded',
    );
    const expected = (await c.allFrames(ref.body.task_id, 500)).map((f) => f.frame_time_ms);
    expect(expected.length).toBeGreaterThan(100);

    const firstFrames = (task: string) =>
      waitFor('the first frames', async () => {
        const r = await c.api('GET', `/v1/vision/tasks/${task}/results?limit=500`);
        return r.body.items.length > 0 ? true : undefined;
      });
    // A live task too: while the broker is down its publishing waits, so its newest frames push out the
    // waiting ones (counted in vision_inference_frames_dropped_total). It is started first: its first frames
    // can take longer than the whole file job, which must still be running when the broker goes.
    const live = await c.createByUrl(`${media.url}/live/pedestrians.mov`);
    expect(live.status).toBe(201);
    await firstFrames(live.body.task_id as string);
    const created = await c.upload(LONG);
    expect(created.status).toBe(201);
    const id = created.body.task_id as string;
    // Restart the broker once frames are flowing and the task is far from done.
    await firstFrames(id);
    await stack.stopServer('kafka');
    try {
      const during = await c.task(id);
      expect(during.status).toBe(200);
      expect(during.body.status).toBe('running'); // the fault lands mid-run
      await new Promise((r) => setTimeout(r, 3000));
    } finally {
      // Never leave the broker down for a retry or the next test file.
      await stack.startServer('kafka');
    }
    await waitForProm(
      "the live job's dropped frames",
      `vision_inference_frames_dropped_total{deployment="${stack.deployment.id}",service="inference",scene="person_vehicle",reason="behind"} > 0`,
      (r) => r.length === 1,
    );
    expect((await c.api('POST', `/v1/vision/tasks/${live.body.task_id}/stop`)).status).toBe(200);

    await expectSucceededWithEveryFrameOnce(c, id, expected);
  }, 600_000);
});
