/**
 * Faults under a steady, bounded load through the route on the real node (scripts/test-cluster.sh): each
 * Deployment's pods deleted in turn, an upgrade to a new image tag and its rollback. A caller sees only
 * documented answers (success, or 503 with Retry-After) and no reset connection.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  eventually,
  gatewayUrl,
  get,
  installRelease,
  kubeBin,
  need,
  run,
  type Release,
} from './node-cluster';
import { startSteadyLoad, undocumented } from './steady-load';

jest.setTimeout(1_800_000);
const MEDIA = path.join(process.env.VISION_SHARED_DIR ?? path.resolve(__dirname, '../../../shared'), 'media');

let release: Release;
let key = '';
let task = '';

const ready = (ns: string) => {
  for (const d of get(['deployments', '-n', ns])) {
    const spec = d.spec as { replicas: number };
    const status = d.status as { readyReplicas?: number; updatedReplicas?: number; replicas?: number };
    if (status.readyReplicas !== spec.replicas || status.replicas !== spec.replicas)
      throw new Error(`${d.metadata.name}: ${status.readyReplicas ?? 0}/${spec.replicas} ready`);
  }
};

beforeAll(async () => {
  // Two replicas of every stateless service, the detect pool included; the job-running inference pod is one.
  release = await installRelease(
    'faults',
    'faults',
    '--set',
    'services.inferenceDetect.autoscaling.enabled=false',
    '--set',
    'services.inferenceDetect.replicas=2',
  );
  const [gw] = get(['pods', '-n', release.namespace, '-l', 'app.kubernetes.io/component=gateway']);
  const out = run('kubectl', [
    'exec',
    '-n',
    release.namespace,
    gw.metadata.name,
    '--',
    'node',
    'services/gateway/dist/keys-cli.js',
    'create',
    '--subject',
    'node-faults',
  ]);
  key = /^key:\s+(\S+)$/m.exec(out)?.[1] ?? '';
  // A finished task whose results the readers page through.
  const form = new FormData();
  form.append('scene_code', 'person_vehicle');
  form.append(
    'file',
    new Blob([readFileSync(path.join(MEDIA, 'videos/pedestrians_vtest_opencv_10s.mov'))]),
    'clip.mov',
  );
  const created = await eventually(async () => {
    const r = await fetch(`${gatewayUrl()}/v1/vision/video-tasks`, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID() },
    });
    if (r.status !== 201) throw new Error(`create: ${r.status} ${await r.text()}`);
    return (await r.json()) as { task_id: string };
  });
  task = created.task_id;
});
afterAll(async () => {
  if (release) await release.uninstall();
});

test("deleting each Deployment's pods in turn loses no call and resets no connection", async () => {
  const load = startSteadyLoad({ baseUrl: gatewayUrl(), key, task });
  const deleted: string[] = [];
  try {
    for (const d of get(['deployments', '-n', release.namespace])) {
      const component = d.metadata.labels?.['app.kubernetes.io/component'] ?? d.metadata.name;
      const [pod] = get(['pods', '-n', release.namespace, '-l', `app.kubernetes.io/component=${component}`]);
      run('kubectl', ['delete', 'pod', '-n', release.namespace, pod.metadata.name, '--wait=true']);
      deleted.push(pod.metadata.name);
      await eventually(() => ready(release.namespace), 300_000);
    }
  } finally {
    const outcomes = await load.stop();
    const bad = undocumented(outcomes);
    expect({ deleted: deleted.length > 0, calls: outcomes.length > 20, undocumented: bad }).toEqual({
      deleted: true,
      calls: true,
      undocumented: [],
    });
  }
});

test('an upgrade to a new image tag and its rollback fail no call', async () => {
  // The same image under another tag, in the node's containerd: every pod is replaced.
  const ctr = spawnSync(
    path.join(kubeBin(), 'ctr'),
    [
      '--address',
      path.join(need('VISION_KUBE_WORK'), 'containerd/containerd.sock'),
      '-n',
      'k8s.io',
      'images',
      'tag',
      '--force',
      'localhost/vision:dev',
      'localhost/vision:dev-retag',
    ],
    { encoding: 'utf8' },
  );
  expect({ status: ctr.status, err: ctr.stderr }).toEqual({ status: 0, err: expect.any(String) });
  const load = startSteadyLoad({ baseUrl: gatewayUrl(), key, task });
  try {
    release.upgrade('--set', 'image.tag=dev-retag');
    await eventually(() => ready(release.namespace), 300_000);
    run('helm', ['rollback', release.name, '-n', release.namespace, '--wait', '--timeout', '10m']);
    await eventually(() => ready(release.namespace), 300_000);
  } finally {
    const outcomes = await load.stop();
    // Zero failed calls: with two replicas and the readiness gate, not even a 503.
    expect({ calls: outcomes.length > 20, failed: outcomes.filter((o) => !(o.status! < 300)) }).toEqual({
      calls: true,
      failed: [],
    });
  }
});

test('a video task whose inference container is killed mid-task ends as documented, charged at most once', async () => {
  const api = (p: string, init: RequestInit = {}) =>
    fetch(`${gatewayUrl()}${p}`, {
      ...init,
      headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string> | undefined) },
    });
  const used = async () =>
    ((await (await api('/v1/vision/quota')).json()) as { video_tasks: { used: number } }).video_tasks.used;
  const before = await used();
  const form = new FormData();
  form.append('scene_code', 'person_vehicle');
  form.append(
    'file',
    new Blob([readFileSync(path.join(MEDIA, 'videos/pedestrians_vtest_opencv.mp4'))]),
    'long.mp4',
  );
  const created = await api('/v1/vision/video-tasks', {
    method: 'POST',
    body: form,
    headers: { 'idempotency-key': randomUUID() },
  });
  expect(created.status).toBe(201);
  const { task_id: id } = (await created.json()) as { task_id: string };
  await eventually(
    async () => {
      const t = (await (await api(`/v1/vision/tasks/${id}`)).json()) as { status: string };
      if (t.status !== 'running') throw new Error(t.status);
    },
    300_000,
    1000,
  );
  // The container's process killed by the runtime (SIGKILL), as the kernel's OOM killer would.
  const [pod] = get(['pods', '-n', release.namespace, '-l', 'app.kubernetes.io/component=inference']);
  const statuses = (pod.status as { containerStatuses: { containerID: string }[] }).containerStatuses;
  const containerId = statuses[0].containerID.replace(/^containerd:\/\//, '');
  const kill = spawnSync(
    path.join(kubeBin(), 'ctr'),
    [
      '--address',
      path.join(need('VISION_KUBE_WORK'), 'containerd/containerd.sock'),
      '-n',
      'k8s.io',
      'tasks',
      'kill',
      '--signal',
      'SIGKILL',
      containerId,
    ],
    { encoding: 'utf8' },
  );
  expect({ status: kill.status, err: kill.status === 0 ? '' : kill.stderr }).toEqual({ status: 0, err: '' });
  const end = await eventually(
    async () => {
      const t = (await (await api(`/v1/vision/tasks/${id}`)).json()) as { status: string; reason?: string };
      if (t.status === 'running' || t.status === 'queued') throw new Error(t.status);
      return t;
    },
    600_000,
    3000,
  );
  // Resumed to its end, or ended with its reason; a refunded task costs nothing, any other at most one unit.
  if (end.status !== 'succeeded') expect(end.reason).toEqual(expect.any(String));
  const charged = (await used()) - before;
  expect(charged).toBe(end.status === 'refunded' ? 0 : 1);
  await eventually(() => ready(release.namespace), 300_000);
});
