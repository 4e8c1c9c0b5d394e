/**
 * Video jobs outlive any inference pod on the real node (docs/OPERATIONS.md, "Scaling video jobs"): six live RTSP
 * tasks from a camera on the host and, through each event, two uploaded files, while the job-running inference
 * Deployment goes through what an SRE does to it: a `helm upgrade` of its image (its pods rolled one at a time), a
 * `kubectl delete pod`, an eviction through the Eviction API (a second one refused by the PodDisruptionBudget), and
 * a scale from 2 to 3 replicas and back. For every task and every event: it stays `running` or `succeeded`, never
 * refunded; a file has every frame once with the detections of an uninterrupted run; a live task's capture times
 * go on with at most 5 s missing; every task is charged once.
 */
import { randomUUID } from 'node:crypto';
import { frameContent, seqOf, type ResultFrame } from '../helpers/result-frames';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import knexFactory from 'knex';
import { readStackEnv } from '../../scripts/distributed/stack-servers';
import { streamServer, type StreamServer } from '../helpers/stream-servers';
import { hostServers } from './host-servers';
import {
  ctr,
  evict,
  eventually,
  gatewayUrl,
  get,
  hostIp,
  installRelease,
  MEDIA,
  runAsync,
  type Release,
} from './node-cluster';

jest.setTimeout(2_400_000);

const LIVE = 6;
const CLIP = 'videos/pedestrians_vtest_opencv.mp4';
const HANDOVER_GAP_MS = 5000;

let release: Release;
let camera: StreamServer;
let key = '';
let db: ReturnType<typeof knexFactory> | undefined;
const api = (p: string, init: RequestInit = {}) =>
  fetch(`${gatewayUrl()}${p}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string> | undefined) },
    signal: AbortSignal.timeout(60_000),
  });
const status = async (id: string) =>
  (await (await api(`/v1/vision/tasks/${id}`)).json()) as { status: string };

beforeAll(async () => {
  camera = await streamServer('rtsp', { address: hostIp() });
  await camera.start();
  release = await installRelease(
    'jobs',
    'jobs',
    ...hostServers(camera.port),
    // Two replicas held by hand (the HPA would scale on its own), each able to hold every job while the other drains.
    ...['--set', 'services.inference.autoscaling.enabled=false', '--set', 'services.inference.replicas=2'],
    ...['--set-string', 'services.inference.env.INFERENCE_MAX_JOBS=10'],
    ...['--set-string', 'services.inference.env.INFERENCE_SAMPLE_FPS=1'],
    ...['--set-string', 'services.quota.env.QUOTA_VIDEO_DAILY=100'],
    ...['--set-string', 'services.tasks.env.TASKS_MAX_ACTIVE=20'],
  );
  key = release.createKey('node-video-jobs');
});
afterAll(async () => {
  await db?.destroy();
  await camera?.stop();
  if (release) await release.uninstall();
});

async function upload(): Promise<string> {
  const form = new FormData();
  form.append('scene_code', 'person_vehicle');
  form.append('file', new Blob([readFileSync(path.join(MEDIA, CLIP))]), path.basename(CLIP));
  const r = await api('/v1/vision/video-tasks', {
    method: 'POST',
    body: form,
    headers: { 'idempotency-key': randomUUID() },
  });
  if (r.status !== 201) throw new Error(`upload: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { task_id: string }).task_id;
}

async function frames(id: string): Promise<ResultFrame[]> {
  const out: ResultFrame[] = [];
  let cursor = '';
  for (let page = 0; page < 100; page++) {
    const q = new URLSearchParams({ limit: '100', ...(cursor ? { cursor } : {}) });
    const r = await api(`/v1/vision/tasks/${id}/results?${q}`);
    if (r.status !== 200) throw new Error(`results of ${id}: ${r.status}`);
    const body = (await r.json()) as { items: ResultFrame[]; next_cursor: string };
    out.push(...body.items);
    if (body.items.length === 0 || !body.next_cursor) break;
    cursor = body.next_cursor;
  }
  return out.sort((a, b) => seqOf(a) - seqOf(b));
}

const ended = (id: string) =>
  eventually(
    async () => {
      const t = await status(id);
      if (['queued', 'running', 'stopping'].includes(t.status)) throw new Error(`${id} ${t.status}`);
      return t;
    },
    900_000,
    3000,
  );

/** Who runs each job now (replica id `<pod name>-<8 hex>`), from the release's database. */
async function owners(): Promise<Map<string, string>> {
  db ??= knexFactory({
    client: 'pg',
    connection: `${readStackEnv().pgUrl}/${release.database}`,
    pool: { min: 0, max: 1 },
  });
  const rows = (await db.withSchema('inference').table('jobs').where({ taken: true, status: 'running' })) as {
    job_id: string;
    owner: string;
  }[];
  return new Map(rows.map((r) => [r.job_id, r.owner]));
}

const inferencePods = () =>
  get(['pods', '-n', release.namespace, '-l', 'app.kubernetes.io/component=inference']).filter(
    (p) => !p.metadata.deletionTimestamp,
  );
const inferenceDeployment = () =>
  get(['deployments', '-n', release.namespace, '-l', 'app.kubernetes.io/component=inference'])[0].metadata
    .name;
const settled = (replicas: number) =>
  eventually(() => {
    const pods = get(['pods', '-n', release.namespace, '-l', 'app.kubernetes.io/component=inference']);
    const ready = pods.filter((p) =>
      (p.status as { conditions?: { type: string; status: string }[] }).conditions?.some(
        (c) => c.type === 'Ready' && c.status === 'True',
      ),
    );
    if (pods.length !== replicas || ready.length !== replicas)
      throw new Error(`inference: ${ready.length} ready of ${pods.length}, ${replicas} wanted`);
  }, 600_000);

/** The pod that runs the most jobs now: the one whose loss moves the most. */
async function busiestPod(): Promise<string> {
  const counts = new Map<string, number>();
  for (const owner of (await owners()).values()) counts.set(owner, (counts.get(owner) ?? 0) + 1);
  const [owner] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0];
  const pod = inferencePods().find((p) => owner.startsWith(`${p.metadata.name}-`));
  if (!pod) throw new Error(`no pod for replica ${owner}`);
  return pod.metadata.name;
}

const live: string[] = [];
let reference: ResultFrame[] = [];
const tasks: string[] = [];
/** Per event and task, what the checks measured: printed as a table at the end. */
const figures: string[] = [];
/** The figures of live tasks with too few frames or too wide a gap: none, checked once every event has run. */
const wide: string[] = [];

/**
 * Runs `event` with the live tasks running and two new file tasks under way, then checks every task through it: a
 * live task's largest capture-time gap since the event began, each file's frames against the uninterrupted run.
 */
async function through(name: string, event: () => Promise<void>): Promise<void> {
  const files = [await upload(), await upload()];
  tasks.push(...files);
  for (const id of files)
    await eventually(async () => {
      if ((await frames(id)).length < 3) throw new Error(`${id}: fewer than 3 frames`);
    }, 300_000);
  const began = Date.now();
  await event();
  for (const id of files)
    expect({ id, end: await ended(id) }).toMatchObject({ id, end: { status: 'succeeded' } });
  for (const id of files) {
    const got = await frames(id);
    figures.push(`| ${name} | file ${id.slice(0, 8)} | ${got.length} of ${reference.length} frames | - |`);
    expect(got.map(seqOf)).toEqual(reference.map(seqOf));
    expect(got.map(frameContent)).toEqual(reference.map(frameContent));
  }
  // Frames captured through the event, and a little after: the live jobs came back where they went.
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  for (const id of live) {
    expect({ id, status: (await status(id)).status }).toEqual({ id, status: 'running' });
    const got = (await frames(id)).filter((f) => f.frame_time_ms >= began - 5000);
    const times = got.map((f) => f.frame_time_ms);
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    const widest = Math.max(0, ...gaps);
    const at = times[gaps.indexOf(widest)] - began;
    figures.push(`| ${name} | live ${id.slice(0, 8)} | ${got.length} frames | ${widest} ms (${at} ms in) |`);
    if (got.length <= 5 || widest > HANDOVER_GAP_MS) wide.push(figures[figures.length - 1]);
  }
}

test('six live tasks and the files under way keep running through an upgrade, a deletion, an eviction and a scale', async () => {
  // The run every moved file is compared with: alone, before any pod moves.
  const ref = await upload();
  tasks.push(ref);
  expect(await ended(ref)).toMatchObject({ status: 'succeeded' });
  reference = await frames(ref);
  expect(reference.map(seqOf)).toEqual(reference.map((_, i) => i));

  for (let i = 0; i < LIVE; i++) {
    const r = await api('/v1/vision/tasks', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({
        scene_code: 'person_vehicle',
        stream_url: `rtsp://${hostIp()}:${camera.port}/cam`,
      }),
    });
    expect(r.status).toBe(201);
    live.push(((await r.json()) as { task_id: string }).task_id);
  }
  tasks.push(...live);
  for (const id of live)
    await eventually(async () => {
      if ((await frames(id)).length < 3) throw new Error(`${id}: fewer than 3 frames`);
    }, 300_000);
  // Both replicas run jobs: the new ones went where there was room.
  expect(new Set((await owners()).values()).size).toBe(2);

  // A helm upgrade of the inference image (services.inference.image): its pods replaced one at a time, the rest kept.
  ctr(['images', 'tag', '--force', 'localhost/vision:dev', 'localhost/vision:dev-jobs']);
  const others = () =>
    get(['deployments', '-n', release.namespace])
      .filter((d) => d.metadata.labels?.['app.kubernetes.io/component'] !== 'inference')
      .map((d) => `${d.metadata.name}@${(d.metadata as { generation?: number }).generation}`);
  const before = others();
  await through('helm upgrade of the inference image', async () => {
    await release.upgrade('--set', 'services.inference.image.tag=dev-jobs');
    await settled(2);
  });
  const rollouts = get([
    'replicasets',
    '-n',
    release.namespace,
    '-l',
    'app.kubernetes.io/component=inference',
  ]);
  const images = rollouts
    .filter((r) => (r.status as { replicas: number }).replicas > 0)
    .map(
      (r) =>
        (r.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]
          .image,
    );
  expect({ images, others: others() }).toEqual({ images: ['localhost/vision:dev-jobs'], others: before });

  await through('kubectl delete pod', async () => {
    await runAsync('kubectl', ['delete', 'pod', '-n', release.namespace, await busiestPod(), '--wait=true']);
    await settled(2);
  });

  await through('eviction', async () => {
    const [first, second] = inferencePods().map((p) => p.metadata.name);
    const evicted = evict(release.namespace, first);
    expect(evicted).toMatchObject({ ok: true });
    // The budget (maxUnavailable 1) refuses the other pod while the first is away.
    const refused = evict(release.namespace, second);
    expect({ ok: refused.ok, tooMany: /429|disruption budget/i.test(refused.said) }).toEqual({
      ok: false,
      tooMany: true,
    });
    await settled(2);
  });

  const scaleTo = async (n: number) => {
    await runAsync('kubectl', [
      'scale',
      'deployment',
      '-n',
      release.namespace,
      inferenceDeployment(),
      `--replicas=${n}`,
    ]);
    await settled(n);
  };
  await through('scale 2 to 3 and back', async () => {
    await scaleTo(3);
    // The new replica takes its share of the live jobs (handed over by the others).
    await eventually(async () => {
      const per = new Map<string, number>();
      for (const [job, owner] of await owners())
        if (live.includes(job)) per.set(owner, (per.get(owner) ?? 0) + 1);
      if (per.size !== 3) throw new Error(`live jobs on ${per.size} replicas`);
    }, 120_000);
    await scaleTo(2);
  });

  for (const id of live)
    expect((await api(`/v1/vision/tasks/${id}/stop`, { method: 'POST' })).status).toBe(200);
  for (const id of live) expect(await ended(id)).toMatchObject({ status: 'stopped' });
  console.log(['| event | task | frames | widest live gap |', '|---|---|---|---|', ...figures].join('\n'));
  expect(wide).toEqual([]);
  // Charged once each, refunded never.
  const quota = (await (await api('/v1/vision/quota')).json()) as { video_tasks: { used: number } };
  expect(quota.video_tasks.used).toBe(tasks.length);
  // No inference container restarted: every move was a handover, not a crash.
  for (const pod of inferencePods())
    for (const c of (pod.status as { containerStatuses: { restartCount: number }[] }).containerStatuses)
      expect({ pod: pod.metadata.name, restarts: c.restartCount }).toEqual({
        pod: pod.metadata.name,
        restarts: 0,
      });
});
