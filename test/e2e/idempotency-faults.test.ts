/**
 * The same Idempotency-Key faults against both create endpoints that charge (video tasks by upload,
 * SPEC.md 4.2; image detections, SPEC.md 4.6), through the gateway of the whole standalone stack: both
 * run on the one claim mechanism of packages/shared (idempotency/claims.ts), so every fault gets the same
 * answer. A first request whose process died is what it leaves in the service's claim table: a claim
 * whose lease lapsed (written with the service's own store adapter), maybe with its stored outcome and
 * its charge or hold. It needs the services in this process, so it runs on the standalone stack only (the
 * distributed crash of a create is test/distributed/tasks-killed.test.ts).
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  type ClaimTable,
  type ClaimRecord,
  type IdentitySigner,
  findIdentityRoute,
  IDENTITY_ROUTES,
  loadCallingIdentity,
  signIdentity,
} from '@vision/shared';
import type { RunningImages } from '../../services/images/src/index';
import { requestFingerprint } from '../../services/images/src/domain/fingerprint';
import { fingerprintOf } from '../../services/tasks/src/domain/fingerprint';
import type { TasksService } from '../../services/tasks/src/index';
import { DISTRIBUTED, standaloneOnly } from '../helpers/composition';
import {
  MEDIA,
  settledQuota,
  startStandaloneStack,
  type ApiResponse,
  type TestStack,
} from '../helpers/stack';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

const VIDEO = readFileSync(path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv_10s.mov'));
const IMAGE = readFileSync(path.join(MEDIA, 'images', 'sheep_coco5992.jpg'));
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const SCENE = { video: 'person_vehicle', images: 'cow_sheep' } as const;
const OTHER_SCENE = 'ship';
// How long a duplicate waits for the first call. Long enough that the concurrent duplicates of the first
// case find the first finished on a loaded machine (it runs a detection); the in-progress case waits it out.
const WAIT_MS = 10_000;
const LEASE_MS = 1000;

const SCENARIOS = [
  'dupes',
  'mismatch',
  'busy',
  'died-running',
  'died-settling',
  'swept',
  'refused',
  'donor',
] as const;
type Scenario = (typeof SCENARIOS)[number];
type Name = 'video' | 'images';
const apiKey = (name: Name, s: Scenario) => `e2e-key-idem-${name}-${s}-0123456789`;
const subjectOf = (name: Name, s: Scenario) => `idem-${name}-${s}`;

let stack: TestStack;

/** One create endpoint, seen the same way for every scenario. */
interface Endpoint {
  name: Name;
  /** Units the request charges once (one video task; one image that succeeds). */
  units: number;
  send(s: Scenario, key: string, scene?: string): Promise<ApiResponse>;
  used(s: Scenario): Promise<number>;
  /** What a first request whose process died leaves: its claim (lease until `leaseUntil`), maybe its stored, charged outcome. */
  plant(s: Scenario, key: string, leaseUntil: Date, stored: boolean): Promise<string>;
  /** The service's sweeper of interrupted requests (tasks: crash recovery; images: settle sweeper). */
  sweep(): Promise<void>;
}

/** The key of the service that makes this internal call (the first issuer the route table lists for it). */
const signerFor = (service: string, route: string): IdentitySigner => {
  const found = findIdentityRoute(IDENTITY_ROUTES, service, 'POST', route);
  if (!found) throw new Error(`no route POST ${route} on ${service}`);
  return loadCallingIdentity(stack.standalone!.env.VISION_IDENTITY_DIR, found.issuers[0]).signer;
};

const internal = async (service: string, s: string, route: string, body: unknown) => {
  const svc = stack.standalone!.services[service];
  const r = await fetch(`${svc.url}${route}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-vision-identity': signIdentity(
        signerFor(service, route),
        { subject: s, requestId: randomUUID() },
        service,
        { method: 'POST', target: route },
      ),
    },
    body: JSON.stringify(body),
  });
  expect(r.status).toBe(201);
};

const tasksSvc = () => stack.standalone!.services.tasks as TasksService;
const imagesSvc = () => stack.standalone!.services.images as RunningImages;

async function claim<R extends ClaimRecord, N>(
  table: ClaimTable<R, N>,
  c: { subject: string; key: string; fingerprint: string; leaseUntil: Date },
  data: N,
): Promise<string> {
  const taskId = randomUUID();
  expect(await table.claim({ ...c, ...data, taskId, createdAt: new Date() })).toBe(true);
  return taskId;
}

const video: Endpoint = {
  name: 'video',
  units: 1,
  send(s, key, scene = SCENE.video) {
    const form = new FormData();
    form.append('scene_code', scene);
    form.append('file', new Blob([VIDEO]), 'clip.mov');
    return stack.api('POST', '/v1/vision/video-tasks', {
      key: apiKey('video', s),
      headers: { 'idempotency-key': key },
      body: form,
    });
  },
  async used(s) {
    return (await stack.api('GET', '/v1/vision/quota', { key: apiKey('video', s) })).body.video_tasks
      .used as number;
  },
  async plant(s, key, leaseUntil, stored) {
    const subject = subjectOf('video', s);
    const fingerprint = fingerprintOf({
      endpoint: 'video-tasks',
      scene_code: SCENE.video,
      file_sha256: sha256(VIDEO),
    });
    const store = tasksSvc().store;
    const taskId = await claim(store.claims, { subject, key, fingerprint, leaseUntil }, {});
    if (!stored) return taskId;
    // It wrote its task (its video in storage: one a real upload of another key left there), was
    // charged, and died before submitting it.
    const donor = await video.send('donor', randomUUID());
    expect(donor.status).toBe(201);
    const objectKey = (await store.get(donor.body.task_id))?.object_key;
    if (!objectKey) throw new Error('the donor task has no video');
    const ins = await store.insertSubmitting(
      {
        task_id: taskId,
        subject,
        request_id: key,
        scene_code: SCENE.video,
        business_threshold: 0.8,
        lower_bound: 0.3,
        source_type: 'file',
        object_key: objectKey,
        object_sha256: sha256(VIDEO),
        object_size: VIDEO.length,
        retention_days: 90,
      },
      { subject, key, taskId, attempt: 0 },
      10,
    );
    expect(ins.kind).toBe('created');
    await internal('quota', subject, '/internal/v1/charges', { charge_id: taskId, kind: 'video', units: 1 });
    return taskId;
  },
  sweep: () => tasksSvc().workers.recoverSubmitting(),
};

const images: Endpoint = {
  name: 'images',
  units: 1,
  send(s, key, scene = SCENE.images) {
    const form = new FormData();
    form.append('scene_code', scene);
    form.append('files', new Blob([IMAGE]), 'sheep.jpg');
    return stack.api('POST', '/v1/vision/image-detections', {
      key: apiKey('images', s),
      headers: { 'idempotency-key': key },
      body: form,
    });
  },
  async used(s) {
    // A call's charge is reported just after its answer: read it once settled.
    return (await settledQuota(stack, apiKey('images', s))).images.used;
  },
  async plant(s, key, leaseUntil, stored) {
    const subject = subjectOf('images', s);
    const fingerprint = requestFingerprint(SCENE.images, [sha256(IMAGE)]);
    const calls = imagesSvc().parts.calls;
    const taskId = await claim(
      calls,
      { subject, key, fingerprint, leaseUntil },
      { sceneCode: SCENE.images, imageCount: 1 },
    );
    if (!stored) return taskId;
    // It held quota, stored its results and died before settling the hold (a call recorded with a hold: no lease).
    await internal('quota', subject, '/internal/v1/holds', { hold_id: taskId, kind: 'image', units: 1 });
    const results = [{ seq: 0, status: 'succeeded', objects: [] }];
    expect(
      await calls.storeResults({ subject, key, taskId, attempt: 0 }, results as never, 1, undefined as never),
    ).toBe(true);
    return taskId;
  },
  sweep: async () => {
    await imagesSvc().parts.detections.recoverLapsed();
  },
};

const reasonOf = (r: ApiResponse): unknown => r.body?.error?.details?.reason;
const lapsed = () => new Date(Date.now() - 1);

beforeAll(async () => {
  if (DISTRIBUTED) return;
  const keys = (['video', 'images'] as const).flatMap((n) =>
    SCENARIOS.map((s) => `${apiKey(n, s)}:${subjectOf(n, s)}`),
  );
  stack = await startStandaloneStack({
    keys: keys.join(','),
    env: {
      TASKS_IDEMPOTENCY_WAIT_MS: String(WAIT_MS),
      IMAGES_IDEMPOTENCY_WAIT_MS: String(WAIT_MS),
      TASKS_RECOVER_AFTER_MS: String(LEASE_MS),
      IMAGES_CALL_CLAIM_MS: String(LEASE_MS),
    },
  });
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

const describeStandalone = standaloneOnly(
  'it writes into the services of this process; test/distributed/tasks-killed.test.ts crashes a create there',
).describe;

describeStandalone.each([video, images])('the same faults, the same answers: $name', (ep) => {
  it('concurrent duplicates: one run, one charge, one task; the others replay it with 200', async () => {
    const key = randomUUID();
    const rs = await Promise.all([0, 1, 2, 3].map(() => ep.send('dupes', key)));
    expect(rs.map((r) => r.status).sort()).toEqual([200, 200, 200, 201]);
    expect(new Set(rs.map((r) => r.body.task_id)).size).toBe(1);
    expect(await ep.used('dupes')).toBe(ep.units);
  });

  it('the key with another meaning: 400 OP-TASK-REQUEST-INVALID idempotency_mismatch, nothing charged', async () => {
    const key = randomUUID();
    expect((await ep.send('mismatch', key)).status).toBe(201);
    const r = await ep.send('mismatch', key, OTHER_SCENE);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('OP-TASK-REQUEST-INVALID');
    expect(reasonOf(r)).toBe('idempotency_mismatch');
    expect(await ep.used('mismatch')).toBe(ep.units);
  });

  it('a duplicate while the first still runs: 503 OP-SYS-UNAVAILABLE in_progress with Retry-After after the wait', async () => {
    const key = randomUUID();
    await ep.plant('busy', key, new Date(Date.now() + 60_000), false);
    const started = Date.now();
    const r = await ep.send('busy', key);
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe('OP-SYS-UNAVAILABLE');
    expect(reasonOf(r)).toBe('in_progress');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(WAIT_MS);
    expect(await ep.used('busy')).toBe(0);
  });

  it('the first died before anything was owed: the next duplicate runs it under its task id, charged once', async () => {
    const key = randomUUID();
    const taskId = await ep.plant('died-running', key, lapsed(), false);
    const r = await ep.send('died-running', key);
    expect(r.status).toBe(201);
    expect(r.body.task_id).toBe(taskId);
    const again = await ep.send('died-running', key);
    expect(again.status).toBe(200);
    expect(again.body.task_id).toBe(taskId);
    expect(await ep.used('died-running')).toBe(ep.units);
  });

  it('the first died after storing its charged outcome: the next duplicate finishes it and answers 200, charged once', async () => {
    const key = randomUUID();
    const taskId = await ep.plant('died-settling', key, lapsed(), true);
    const r = await ep.send('died-settling', key);
    expect(r.status).toBe(200);
    expect(r.body.task_id).toBe(taskId);
    await ep.sweep();
    expect(await ep.used('died-settling')).toBe(ep.units);
  });

  it('the first died after storing its charged outcome and no duplicate came: the sweeper finishes it once', async () => {
    const key = randomUUID();
    const taskId = await ep.plant('swept', key, lapsed(), true);
    await ep.sweep();
    await ep.sweep();
    const r = await ep.send('swept', key);
    expect(r.status).toBe(200);
    expect(r.body.task_id).toBe(taskId);
    expect(await ep.used('swept')).toBe(ep.units);
  });

  it('a refusal before anything was charged frees the key: the same key then runs another meaning', async () => {
    const key = randomUUID();
    const refused = await ep.send('refused', key, 'no_such_scene');
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('OP-TASK-SCENE-UNAVAILABLE');
    const r = await ep.send('refused', key);
    expect(r.status).toBe(201);
    expect(await ep.used('refused')).toBe(ep.units);
  });
});
