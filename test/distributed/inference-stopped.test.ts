import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { IDENTITY_HEADER, loadCallingIdentity, signIdentity } from '@vision/shared';
import type { DistributedStack } from '../helpers/distributed';
import { startMediaServer, type MediaServer } from '../helpers/media-server';
import { callApi } from '../helpers/api-call';
import { MEDIA, type ApiResponse } from '../helpers/stack';
import { CONTAINERS, TERMINAL, client, clip, describeDistributed, sleep, startFaultStack } from './support';

const IMAGE = readFileSync(path.join(MEDIA, 'images', 'street_people_car_coco9891.jpg'));
/** Inference silent this long while a call waits opens a breaker (IMAGES_ and TASKS_BREAKER_HANG_MS). */
const HANG_MS = 3000;
/** Half-open this long after it opened (IMAGES_ and TASKS_BREAKER_RESET_MS here). */
const RESET_MS = 3000;
/**
 * What a loaded test machine may add to a bound (the call's own work, the hops, Retry-After's whole seconds): in
 * `npm test` this file runs beside the node's phase, the fuzzer and their servers starting, on two cores (a call
 * waited 5.25 s there). Below images' ceiling (IMAGES_DETECT_TIMEOUT_MS, 10 s): a call measured slow that waited its
 * own timeout, not the hang bound, fails it.
 */
const SLACK_MS = 3000;
/** The breaker refuses this soon after the backend stops answering, on every replica (docs/OVERLOAD.md). */
const OPENS_WITHIN_MS = HANG_MS + SLACK_MS;

type Call = () => Promise<ApiResponse>;
const code = (r: ApiResponse): string | undefined => r.body?.error?.code;

/**
 * Calls one at a time until the breaker refuses one; each call's wait, and when the refused call was sent (the breaker
 * was open by then; its own trip through a loaded machine is not the breaker's time).
 */
async function untilRefused(who: string, call: Call, since: number, ownWorkMs = 0) {
  const waited: number[] = [];
  /** Each call's answer, for the failure message: `201`, `503 OP-TASK-UPSTREAM-DOWN`... */
  const answers: string[] = [];
  for (let i = 0; i < 10; i++) {
    const t0 = Date.now();
    const r = await call();
    waited.push(Date.now() - t0);
    answers.push([r.status, code(r) ?? r.body?.results?.[0]?.error_code].filter(Boolean).join(' '));
    if (code(r) === 'OP-TASK-BREAKER-OPEN')
      return { who, refused: r, openedAfter: t0 - since, waited, ownWorkMs, answers };
  }
  return { who, refused: undefined, openedAfter: Number.POSITIVE_INFINITY, waited, ownWorkMs, answers };
}

/**
 * The backend is back: a call, refused while the breaker is still open; then, once its Retry-After has
 * passed, the first call is the half-open trial and is served. Returns the Retry-After waited, in seconds (0 when
 * the first call was served).
 */
async function firstAfterResetServed(call: Call, served: (r: ApiResponse) => boolean): Promise<number> {
  const r0 = await call();
  if (served(r0)) return 0;
  expect(code(r0)).toBe('OP-TASK-BREAKER-OPEN');
  const retryAfterS = Number(r0.headers.get('retry-after'));
  await sleep(1000 * retryAfterS);
  const r1 = await call();
  expect([r1.status, code(r1)]).toEqual([201, undefined]);
  expect(served(r1)).toBe(true);
  return retryAfterS;
}

/**
 * Inference stopped (SIGSTOP: it accepts connections and never answers) under two images replicas, one of
 * which never fetched the scene list, and tasks; each driven one call at a time. On each the breaker opens
 * within 6 s of the hang, no call waiting past its bound; after SIGCONT the first call once the Retry-After has
 * passed (at most the reset time) is served, image calls and video task creation alike.
 */
// SIGSTOP reaches a service process of the launcher, not one inside a container.
const describeProcesses = CONTAINERS ? describe.skip : describeDistributed;

describeProcesses('fault: inference stopped, calls one at a time on every replica', () => {
  let stack: DistributedStack;
  let media: MediaServer;
  let pid: number;
  /** One image call straight to images replica `index`, as the gateway would send it. */
  const imageCallAt = (index: number): Call => {
    const d = stack.deployment;
    const signer = loadCallingIdentity(d.identityDirs.gateway, 'gateway').signer;
    return () => {
      const form = new FormData();
      form.append('scene_code', 'person_vehicle');
      form.append('files', new Blob([IMAGE]), 'street.jpg');
      const target = '/v1/vision/image-detections';
      const identity = { subject: 'acme', requestId: `stopped-${randomUUID()}` };
      return callApi(
        d.urls('images')[index],
        'POST',
        target,
        {
          headers: {
            'idempotency-key': randomUUID(),
            [IDENTITY_HEADER]: signIdentity(signer, identity, 'images', { method: 'POST', target }),
          },
          body: form,
        },
        { connection: 'close' },
      );
    };
  };
  const createTask: Call = () => client(stack).createByUrl(`${media.url}/live/pedestrians.mov`);
  const imageServed = (r: ApiResponse) => r.status === 201 && r.body.results[0].status === 'succeeded';
  const taskServed = (r: ApiResponse) => r.status === 201 && r.body.status === 'running';
  /** Stops a running task and waits until it is stopped: no stop of its job is left to call inference later. */
  const stopAndWait = async (id: string) => {
    expect((await client(stack).api('POST', `/v1/vision/tasks/${id}/stop`)).status).toBe(200);
    await client(stack).waitForStatus(id, TERMINAL, 60_000);
  };

  beforeAll(async () => {
    stack = await startFaultStack({
      replicas: { images: 2 },
      env: {
        IMAGES_BREAKER_RESET_MS: String(RESET_MS),
        TASKS_BREAKER_RESET_MS: String(RESET_MS),
        // The scene lists' copies are stale when a breaker turns half-open: a refresh must leave the trial alone.
        IMAGES_SCENE_CACHE_MS: '1000',
        TASKS_SCENES_CACHE_MS: '1000',
        QUOTA_VIDEO_DAILY: '50',
      },
    });
    media = await startMediaServer({ 'pedestrians.mov': clip('pedestrians_vtest_opencv_10s.mov') });
    pid = stack.deployment.procs.inference[0]?.child?.pid as number;
    // Replica 0 measures its calls and holds the scene list; replica 1 is never called before the hang.
    const first = imageCallAt(0);
    for (let i = 0; i < 5; i++) expect(imageServed(await first())).toBe(true);
    const warm = await createTask();
    expect(taskServed(warm)).toBe(true);
    await stopAndWait(warm.body.task_id);
  }, 180_000);
  afterAll(async () => {
    if (pid) process.kill(pid, 'SIGCONT');
    await media?.close();
    await stack?.close();
  });

  it('opens every breaker within 6 s of the hang, then serves the first call after the reset on each', async () => {
    // A video task creation does its own work around the job start (the stream's probe, the charge, and on a
    // refusal the refund), which a loaded machine stretches: timed here, on a served creation, just before the stop.
    const t0 = Date.now();
    const served = await createTask();
    const createOwnWorkMs = Date.now() - t0;
    expect(taskServed(served)).toBe(true);
    await stopAndWait(served.body.task_id);
    const since = Date.now();
    process.kill(pid, 'SIGSTOP');
    let seen;
    try {
      seen = await Promise.all([
        untilRefused('images replica 0', imageCallAt(0), since),
        untilRefused('images replica 1', imageCallAt(1), since),
        untilRefused('tasks', createTask, since, createOwnWorkMs),
      ]);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // Named, with every call's wait and answer, so that a late one says where the time went.
    const late = seen
      .filter(
        ({ openedAfter, waited, ownWorkMs }) =>
          openedAfter > OPENS_WITHIN_MS || waited.some((ms) => ms > HANG_MS + SLACK_MS + ownWorkMs),
      )
      .map(({ refused, ...rest }) => ({ ...rest, refused: refused !== undefined }));
    // Each refused within 6 s of the hang, and no call waited past the hang bound (whatever its own timeout) and
    // its own work.
    expect(late).toEqual([]);
    for (const { refused } of seen) {
      expect(refused?.body.error.details.reason).toBe('breaker_open');
      expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }

    // Each is served by the first call after a Retry-After no longer than the reset time: how long the calls
    // themselves take on a loaded machine is not what this proves.
    const retryAfters = await Promise.all([
      firstAfterResetServed(imageCallAt(0), imageServed),
      firstAfterResetServed(imageCallAt(1), imageServed),
      firstAfterResetServed(createTask, taskServed),
    ]);
    for (const s of retryAfters) expect(s).toBeLessThanOrEqual(RESET_MS / 1000);
  }, 180_000);
});
