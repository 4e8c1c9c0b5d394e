import diagnosticsChannel from 'node:diagnostics_channel';
import { createReadStream, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import path from 'node:path';
import { MEDIA, settledQuota, startStack, type TestStack } from '../../../test/helpers/stack';
import { startMediaServer, type MediaServer } from '../../../test/helpers/media-server';
import {
  VisionApiError,
  VisionClient,
  VisionTimeoutError,
  type Frame,
  type Task,
  type UploadProgress,
} from '../src';
import { startCutProxy, type CutProxy } from './support/cut-proxy';
import { keepClearOfQuotaDayTurn } from '../../../test/helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

const MAIN = 'sdk-main-key-0123456789';
const RETRY = 'sdk-retry-key-0123456789';
const RESOLVING = 'sdk-resolving-key-0123456789';
const LONG = 'sdk-long-key-0123456789';
const LIMITED = 'sdk-limited-key-0123456789';
const video = (name: string) => path.join(MEDIA, 'videos', name);
const image = (name: string) => path.join(MEDIA, 'images', name);
const PARKING = video('person_bicycle_car_parkinglot_intel.mp4');
/** 79.7 s at 10 fps; sampled at 13 fps it gives about 1,036 frames. */
const PEDESTRIANS_LONG = video('pedestrians_vtest_opencv.mp4');
const PEDESTRIANS_MOV = video('pedestrians_vtest_opencv_10s.mov');

describe('VisionClient against the standalone stack', () => {
  let stack: TestStack;
  let media: MediaServer;
  let proxy: CutProxy;
  const client = (apiKey: string, baseUrl = stack.url, fetchImpl?: (r: Request) => Promise<Response>) =>
    new VisionClient({ baseUrl, apiKey, fetch: fetchImpl, retry: { minDelayMs: 50 } });

  beforeAll(async () => {
    stack = await startStack({
      keys: `${MAIN}:sdk-main,${RETRY}:sdk-retry,${RESOLVING}:sdk-resolving,${LONG}:sdk-long,${LIMITED}:sdk-limited`,
      env: {
        QUOTA_VIDEO_DAILY: '20',
        TASKS_MAX_ACTIVE: '10',
        INFERENCE_MAX_JOBS: '8',
        INFERENCE_SAMPLE_FPS: '13',
        TASKS_POLL_INTERVAL_MS: '300',
        TASKS_RECONCILE_INTERVAL_MS: '300',
        // The live probe waits for ffmpeg's first frames: generous on a busy machine.
        TASKS_PROBE_TIMEOUT_MS: '30000',
        GATEWAY_BURST: '200',
        GATEWAY_CONCURRENCY: '64',
        // One request per second (no burst) for sdk-limited: a second request at once is answered 429.
        GATEWAY_LIMIT_OVERRIDES: JSON.stringify({ 'sdk-limited': { qps: 1, burst: 0 } }),
      },
    });
    media = await startMediaServer({ 'pedestrians.mov': PEDESTRIANS_MOV });
    proxy = await startCutProxy(stack.url);
  }, 180_000);
  afterAll(async () => {
    await proxy?.close();
    await media?.close();
    await stack?.close();
  });

  it('scenes() and quota() answer typed bodies', async () => {
    const c = client(MAIN);
    const scenes = await c.scenes();
    const pv = scenes.find((s) => s.scene_code === 'person_vehicle');
    expect(pv).toMatchObject({ enabled: true });
    expect(pv?.labels).toContain('person');
    const quota = await c.quota();
    expect(quota.video_tasks).toMatchObject({ limit: 20, used: 0, remaining: 20 });
    expect(quota.images.limit).toBe(100);
  });

  it('an error answer is a VisionApiError with code, details, request id and status', async () => {
    const c = client(MAIN);
    const err = await c.createStreamTask({ streamUrl: 'ftp://127.0.0.1/x', scene: 'person_vehicle' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(VisionApiError);
    expect(err).toMatchObject({ status: 400, code: 'OP-TASK-REQUEST-INVALID', reason: 'stream_url_invalid' });
    expect((err as VisionApiError).requestId).toMatch(/.+/);
    const missing = await c.getTask('no-such-task').catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, code: 'OP-NOT-FOUND' });
    const bad = await new VisionClient({ baseUrl: stack.url, apiKey: 'not-a-key-0123456789' })
      .quota()
      .catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 401, code: 'OP-AUTH-REQUIRED' });
    expect((await c.quota()).video_tasks.used).toBe(0);
  });

  it('detectImages() takes paths and Buffers and answers per image', async () => {
    const c = client(MAIN);
    const before = (await c.quota()).images.used;
    const answer = await c
      .detectImages(
        [
          image('street_people_car_coco9891.jpg'),
          readFileSync(image('fishing_standin_people_in_boat_kodim14.png')),
          { data: Buffer.from('not an image at all'), filename: 'notes.txt' },
        ],
        { scene: 'person_vehicle' },
      )
      .catch((e: unknown) => e);
    // A file that is not an image refuses the whole request (docs/API.md): nothing charged.
    expect(answer).toMatchObject({ code: 'OP-TASK-REQUEST-INVALID', reason: 'unsupported_type' });
    const ok = await c.detectImages(
      [
        image('street_people_car_coco9891.jpg'),
        readFileSync(image('fishing_standin_people_in_boat_kodim14.png')),
      ],
      { scene: 'person_vehicle' },
    );
    expect(ok.results.map((r) => [r.seq, r.status])).toEqual([
      [0, 'succeeded'],
      [1, 'succeeded'],
    ]);
    expect(ok.results[0].objects?.some((o) => o.label === 'person')).toBe(true);
    // A call's charge is reported just after its answer: read the quota once it settled.
    await settledQuota(stack, MAIN);
    expect((await c.quota()).images.used).toBe(before + 2);
    await expect(c.detectImages([])).rejects.toThrow(RangeError);
    const record = await c.getTask(ok.task_id);
    expect(record.kind).toBe('image');
  });

  it('createFileTask() reports upload progress to 100 %; waitForTask, results, listTasks, stopTask', async () => {
    const c = client(MAIN);
    const progress: UploadProgress[] = [];
    const created = await c.createFileTask(
      { file: PARKING, scene: 'person_vehicle' },
      { onUploadProgress: (p) => progress.push(p) },
    );
    expect(created.httpStatus).toBe(201);
    expect(created.replayed).toBe(false);
    expect(created.task.request_id).toBe(created.idempotencyKey);
    const last = progress[progress.length - 1];
    expect(last.percent).toBe(100);
    expect(last.loaded).toBe(last.total);
    expect(last.total).toBeGreaterThan(readFileSync(PARKING).length);
    for (let i = 1; i < progress.length; i++)
      expect(progress[i].loaded).toBeGreaterThanOrEqual(progress[i - 1].loaded);

    const seen: string[] = [];
    const done = await c.waitForTask(created.task.task_id, {
      timeoutMs: 120_000,
      onPoll: (t) => seen.push(t.status),
    });
    expect(done.status).toBe('succeeded');
    expect(seen[seen.length - 1]).toBe('succeeded');

    const frames: Frame[] = [];
    for await (const f of c.results(done.task_id, { limit: 5 })) frames.push(f);
    expect(frames.length).toBeGreaterThan(10);
    const filtered: Frame[] = [];
    for await (const f of c.results(done.task_id, { minScore: 0.5 })) filtered.push(f);
    expect(filtered.map((f) => f.frame_id)).toEqual(frames.map((f) => f.frame_id));
    for (const f of filtered) {
      expect(f.objects_total).toBeGreaterThanOrEqual(f.objects.length);
      for (const o of f.objects) expect(o.score).toBeGreaterThanOrEqual(0.5);
    }

    const page = await c.listTasks({ kind: 'video', limit: 1 });
    expect(page.items.map((t) => t.task_id)).toEqual([done.task_id]);
    const all: Task[] = [];
    for await (const t of c.tasks({ status: 'succeeded' })) all.push(t);
    expect(all.map((t) => t.task_id)).toContain(done.task_id);

    const stopErr = await c.stopTask(done.task_id).catch((e: unknown) => e);
    expect(stopErr).toMatchObject({ status: 409, code: 'OP-TASK-NOT-STOPPABLE' });
  }, 180_000);

  it('createFileTask() takes a Buffer or a stream as well as a path: the service stores the same bytes', async () => {
    const c = client(MAIN);
    const bytes = readFileSync(PARKING);
    const fromBuffer = await c.createFileTask({
      file: { data: bytes, filename: 'parking.mp4' },
      scene: 'person_vehicle',
    });
    const progress: UploadProgress[] = [];
    const fromStream = await c.createFileTask(
      {
        file: { data: createReadStream(PARKING), filename: 'parking.mp4', size: statSync(PARKING).size },
        scene: 'person_vehicle',
      },
      { onUploadProgress: (p) => progress.push(p) },
    );
    expect([fromBuffer.httpStatus, fromStream.httpStatus]).toEqual([201, 201]);
    expect(progress[progress.length - 1].percent).toBe(100);
    for (const created of [fromBuffer, fromStream]) {
      // The stored upload, read back through the owner's download endpoint.
      const res = await fetch(`${stack.url}/v1/vision/tasks/${created.task.task_id}/video`, {
        headers: { authorization: `Bearer ${MAIN}` },
      });
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
      expect((await c.waitForTask(created.task.task_id, { timeoutMs: 120_000 })).status).toBe('succeeded');
    }
  }, 180_000);

  it('createStreamTask() runs a live stream; stopTask() stops it; waitForTask() times out with the last state', async () => {
    const c = client(MAIN);
    const created = await c.createStreamTask({
      streamUrl: `${media.url}/live/pedestrians.mov`,
      scene: 'person_vehicle',
    });
    expect(created.httpStatus).toBe(201);
    const running = await c.waitForTask(created.task.task_id, { until: ['running'], timeoutMs: 60_000 });
    expect(running.status).toBe('running');
    const timedOut = await c.waitForTask(created.task.task_id, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(VisionTimeoutError);
    expect((timedOut as VisionTimeoutError).task?.status).toBe('running');
    // A page of a running task never ends the iteration; follow: false stops at the newest frame.
    const sofar: Frame[] = [];
    for await (const f of c.results(created.task.task_id, { follow: false })) sofar.push(f);
    const stopped = await c.stopTask(created.task.task_id);
    expect(['stopping', 'stopped']).toContain(stopped.status);
    expect((await c.waitForTask(created.task.task_id, { timeoutMs: 60_000 })).status).toBe('stopped');
  }, 180_000);

  it('a create whose answer was lost is retried with the same Idempotency-Key and charged once', async () => {
    const keys: string[] = [];
    const recording = (req: Request) => {
      if (req.method === 'POST') keys.push(String(req.headers.get('idempotency-key')));
      return fetch(req);
    };
    const c = client(RETRY, proxy.url, recording);
    const direct = client(RETRY);
    const before = await direct.quota();

    proxy.cutNextAnswer('/v1/vision/video-tasks');
    const file = await c.createFileTask({ file: PARKING, scene: 'person_vehicle' });
    expect(proxy.cuts).toBe(1);
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    // The server handled the first attempt; the retry is its replay.
    expect(file.httpStatus).toBe(200);
    expect(file.replayed).toBe(true);
    expect(file.task.request_id).toBe(keys[0]);

    keys.length = 0;
    proxy.cutNextAnswer('/v1/vision/tasks');
    const stream = await c.createStreamTask({
      streamUrl: `${media.url}/live/pedestrians.mov`,
      scene: 'person_vehicle',
    });
    expect(proxy.cuts).toBe(2);
    expect(keys).toEqual([keys[0], keys[0]]);
    expect(stream.httpStatus).toBe(200);

    keys.length = 0;
    proxy.cutNextAnswer('/v1/vision/image-detections');
    const images = await c.detectImages([image('street_people_car_coco9891.jpg')], {
      scene: 'person_vehicle',
    });
    expect(proxy.cuts).toBe(3);
    expect(keys).toEqual([keys[0], keys[0]]);
    expect(images.replayed).toBe(true);

    await settledQuota(stack, RETRY);
    const after = await direct.quota();
    expect(after.video_tasks.used).toBe(before.video_tasks.used + 2);
    expect(after.images.used).toBe(before.images.used + 1);
    const tasks: Task[] = [];
    for await (const t of direct.tasks()) tasks.push(t);
    expect(tasks).toHaveLength(3);
    await direct.stopTask(stream.task.task_id);
  }, 120_000);

  it('a create answered 429 OP-QUOTA-RATE-LIMITED is sent again after Retry-After with the same key', async () => {
    const sent: { key: string | null; status: number }[] = [];
    const c = client(LIMITED, stack.url, async (req) => {
      const key = req.headers.get('idempotency-key');
      const res = await fetch(req);
      if (req.method === 'POST') sent.push({ key, status: res.status });
      return res;
    });
    const img = image('sheep_coco5992.jpg');
    const [a, b] = await Promise.all([c.detectImages([img]), c.detectImages([img])]);
    expect([a.replayed, b.replayed]).toEqual([undefined, undefined]);
    expect(a.task_id).not.toBe(b.task_id);
    const limited = sent.filter((s) => s.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    // Every refused request was sent again with its own key until it got through.
    for (const refused of limited)
      expect(sent.some((s) => s.key === refused.key && s.status === 201)).toBe(true);
    expect(new Set(sent.map((s) => s.key)).size).toBe(2);
    await settledQuota(stack, LIMITED);
    expect((await c.quota()).images.used).toBe(2);
  }, 60_000);

  it('waitForTask() polls through resolving without resending the create', async () => {
    const inference = stack.standalone?.services.inference.url;
    if (!inference) throw new Error('needs the standalone stack (its in-process inference service)');
    // The tasks service's submission reaches inference (the job is created) but its answer is lost (the
    // connection drops where the response would go): the outcome is unknown, the task is resolving, and the
    // reconciler later finds the job.
    const inferencePort = Number(new URL(inference).port);
    let lost = 0;
    const dropAnswer = (message: unknown) => {
      const { request, response, socket } = message as {
        request: IncomingMessage;
        response: ServerResponse;
        socket: Socket;
      };
      if (lost > 0 || socket.localPort !== inferencePort) return;
      if (request.method !== 'POST' || request.url !== '/internal/v1/jobs') return;
      lost++;
      response.end = (() => {
        socket.destroy();
        return response;
      }) as ServerResponse['end'];
    };
    diagnosticsChannel.subscribe('http.server.request.start', dropAnswer);
    let creates = 0;
    const c = client(RESOLVING, stack.url, (req) => {
      if (req.method === 'POST') creates++;
      return fetch(req);
    });
    let created;
    try {
      created = await c.createFileTask({ file: PARKING, scene: 'person_vehicle' });
    } finally {
      diagnosticsChannel.unsubscribe('http.server.request.start', dropAnswer);
    }
    expect(lost).toBe(1);
    expect(created.httpStatus).toBe(202);
    expect(created.task.status).toBe('resolving');
    const seen: string[] = [];
    const done = await c.waitForTask(created.task.task_id, {
      timeoutMs: 120_000,
      minIntervalMs: 100,
      onPoll: (t) => seen.push(t.status),
    });
    // The reconciler may settle the task between the 202 and the first poll (seen in CI): the first
    // status seen is resolving or what followed it, never a terminal one before the job ran.
    expect(seen.length).toBeGreaterThan(0);
    expect(['resolving', 'running', 'succeeded']).toContain(seen[0]);
    expect(done.status).toBe('succeeded');
    expect(creates).toBe(1);
    expect((await c.quota()).video_tasks.used).toBe(1);
  }, 180_000);

  it('results() iterates 1,000+ frames of a running task, none repeated or missed', async () => {
    const c = client(LONG);
    // fire_smoke (a colour-and-motion detector) keeps inference cheap: the frames are what counts here.
    const created = await c.createFileTask({ file: PEDESTRIANS_LONG, scene: 'fire_smoke' });
    // Read while inference is still producing: the iterator follows the cursor until the end mark.
    const frames: Frame[] = [];
    for await (const f of c.results(created.task.task_id, { limit: 97, pollIntervalMs: 200 })) frames.push(f);
    // The end of the frames (results) may be seen a moment before the task's status (tasks) follows.
    expect((await c.waitForTask(created.task.task_id, { timeoutMs: 60_000 })).status).toBe('succeeded');
    expect(frames.length).toBeGreaterThanOrEqual(1000);
    expect(new Set(frames.map((f) => f.frame_id)).size).toBe(frames.length);
    for (let i = 1; i < frames.length; i++)
      expect(frames[i].frame_time_ms).toBeGreaterThan(frames[i - 1].frame_time_ms);
    // The same frames, in the same order, when read again after the end with the largest pages.
    const again: string[] = [];
    for await (const page of c.resultPages(created.task.task_id, { limit: 500 }))
      again.push(...page.items.map((f) => f.frame_id));
    expect(again).toEqual(frames.map((f) => f.frame_id));
  }, 600_000);
});
