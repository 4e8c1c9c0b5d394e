/**
 * Video jobs outlive any job-running inference replica (docs/ARCHITECTURE.md, "Who runs a video job"): three
 * replicas behind one address run six live RTSP tasks and four uploaded files; each replica in turn is stopped
 * (SIGTERM: its jobs are handed over) and started again, then one is killed (SIGKILL: its jobs are taken over once
 * its lease runs out). No task fails or is refunded, a file has every frame once with the detections of an
 * uninterrupted run, a live task's capture times go on with at most 5 s missing across a handover and 15 s across
 * the kill, and every task is charged once. Tasks refunds a task at its first lost job (`TASKS_JOB_RESTARTS` 0): the
 * moves are not losses.
 */
import { streamServer, streamUrls, type StreamServer } from '../helpers/stream-servers';
import { frameContent, seqOf, type ResultFrame } from '../helpers/result-frames';
import type { DistributedStack } from '../helpers/distributed';
import {
  client,
  clip,
  describeDistributed,
  expectChargesMatchTasks,
  sleep,
  startFaultStack,
  waitFor,
} from './support';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

keepClearOfQuotaDayTurn();

const FILE = clip('pedestrians_vtest_opencv.mp4');
const LIVE = 6;
const FILES = 4;

describeDistributed('inference replicas: video jobs outlive any of them', () => {
  let stack: DistributedStack;
  let rtsp: StreamServer;
  beforeAll(async () => {
    rtsp = await streamServer('rtsp');
    await rtsp.start();
    stack = await startFaultStack({
      replicas: { inference: 3 },
      env: {
        QUOTA_VIDEO_DAILY: '50',
        // A job lost to tasks would be refunded at once: every task outlives all its moves, none of them counted.
        TASKS_JOB_RESTARTS: '0',
        TASKS_MAX_ACTIVE: '20',
        INFERENCE_MAX_JOBS: '5',
        TASKS_POLL_INTERVAL_MS: '500',
        // Two frames a second: what moves with a job does not depend on the rate, and eleven tasks at 5 fps on
        // three replicas keep two cores busy for minutes.
        INFERENCE_SAMPLE_FPS: '2',
        // Every frame of eleven tasks is read back whole.
        GATEWAY_QPS: '200',
        STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
      },
    });
  }, 240_000);
  afterAll(async () => {
    await stack?.close();
    await rtsp?.stop();
  });

  it('keeps every task running through rolling restarts and a kill, its frames whole and charged once', async () => {
    const c = client(stack);
    // The run every moved file is compared with: alone, before any replica moves.
    const ref = await c.upload(FILE);
    expect(ref.status).toBe(201);
    await c.waitForStatus(ref.body.task_id, ['succeeded'], 300_000);
    const reference = (await c.allFrames(ref.body.task_id, 500)) as ResultFrame[];
    expect(reference.map(seqOf)).toEqual(reference.map((_, i) => i));

    const live: string[] = [];
    for (let i = 0; i < LIVE; i++) {
      const r = await c.createByUrl(streamUrls(rtsp).rtsp);
      expect(r.status).toBe(201);
      live.push(r.body.task_id);
    }
    const files: string[] = [];
    for (let i = 0; i < FILES; i++) {
      const r = await c.upload(FILE);
      expect(r.status).toBe(201);
      files.push(r.body.task_id);
    }
    const framesOf = async (id: string) => (await c.allFrames(id, 500)) as ResultFrame[];
    const hasFrames = async (id: string) => {
      const r = await c.api('GET', `/v1/vision/tasks/${id}/results?limit=1`);
      return r.status === 200 && r.body.items.length > 0;
    };
    for (const id of [...live, ...files])
      await waitFor(`frames of ${id}`, async () => ((await hasFrames(id)) ? true : undefined), 120_000);

    // Each replica in turn stops (its jobs are handed over) and starts again; then one is killed.
    const startedAt = Date.now();
    for (let i = 0; i < 3; i++) {
      await stack.restart('inference', { index: i });
      await sleep(3000);
    }
    const killedAt = Date.now();
    await stack.kill('inference', { signal: 'SIGKILL', index: 1 });
    await stack.restart('inference', { index: 1 });
    const backAt = Date.now() + 15_000;
    await sleep(20_000);

    for (const id of live) expect((await c.task(id)).body.status).toBe('running');
    for (const id of live) expect((await c.api('POST', `/v1/vision/tasks/${id}/stop`)).status).toBe(200);
    for (const id of files) await c.waitForStatus(id, ['succeeded'], 600_000);

    for (const id of files) {
      const frames = await framesOf(id);
      // Every frame once, none from a second pass, the detections and track ids of the uninterrupted run.
      expect(frames.map(seqOf)).toEqual(reference.map(seqOf));
      expect(frames.map(frameContent)).toEqual(reference.map(frameContent));
    }
    // Every capture gap over its bound, with where it was (none expected).
    const wide: string[] = [];
    for (const id of live) {
      await c.waitForStatus(id, ['stopped'], 60_000);
      const frames = (await framesOf(id)).sort((a, b) => seqOf(a) - seqOf(b));
      // The seqs of one run: nothing started again from scratch (2^28 and above).
      expect(seqOf(frames[frames.length - 1])).toBeLessThan(2 ** 28);
      for (let k = 1; k < frames.length; k++) {
        const [a, b] = [frames[k - 1].frame_time_ms, frames[k].frame_time_ms];
        const acrossKill = a <= backAt && b >= killedAt;
        if (b - a <= 0 || b - a > (acrossKill ? 15_000 : 5000))
          wide.push(
            `${id} seq ${seqOf(frames[k])}: ${b - a} ms, ${a - startedAt} ms after the first restart`,
          );
      }
    }
    expect(wide).toEqual([]);
    const tasks = await c.tasks();
    expect(tasks.length).toBe(1 + LIVE + FILES);
    expect(tasks.map((t) => t.status).sort()).toEqual(
      [...Array(1 + FILES).fill('succeeded'), ...Array(LIVE).fill('stopped')].sort(),
    );
    expect((await c.quota()).used).toBe(1 + LIVE + FILES);
    await expectChargesMatchTasks(c);
  }, 1_200_000);
});
