/**
 * Faults under a steady, bounded load through the route on the real node (scripts/test-cluster.sh), on a release
 * with two replicas of every service: each Deployment's pods deleted in turn, an upgrade to a new image tag and its
 * rollback, and the container of the inference pod that runs a video task killed mid-task (another replica takes
 * the job over). A caller sees only documented answers (success, or 503 with Retry-After) and no reset connection.
 * Then the same load shows each guard red when it is taken away from the gateway: the readiness gate (under a slow
 * start), and the preStop pause with the drain.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import knexFactory from 'knex';
import { readStackEnv } from '../../scripts/distributed/stack-servers';
import {
  ctr,
  eventually,
  gatewayUrl,
  get,
  installRelease,
  MEDIA,
  run,
  runAsync,
  type Release,
} from './node-cluster';
import { failures, startSteadyLoad, undocumented, type Outcome } from './steady-load';
import { sampleUsage } from './usage';

jest.setTimeout(1_800_000);

let release: Release;
let key = '';
let task = '';
/** The release's database as the stack's superuser: where the inference replicas keep their video jobs. */
let db: ReturnType<typeof knexFactory> | undefined;

const ready = () => {
  for (const d of get(['deployments', '-n', release.namespace])) {
    const spec = d.spec as { replicas: number };
    const status = d.status as { readyReplicas?: number; updatedReplicas?: number; replicas?: number };
    if (status.readyReplicas !== spec.replicas || status.replicas !== spec.replicas)
      throw new Error(`${d.metadata.name}: ${status.readyReplicas ?? 0}/${spec.replicas} ready`);
  }
};
/** A component's pods that are not being deleted: a rollout's old pods may still be terminating after its status. */
const podsOf = (component: string) =>
  get(['pods', '-n', release.namespace, '-l', `app.kubernetes.io/component=${component}`]).filter(
    (p) => !p.metadata.deletionTimestamp,
  );

/**
 * Runs `fault` under the steady load and resolves with every outcome once the release is whole again. An error of
 * the fault step or of the wait for the release fails the caller, after the load is stopped.
 */
async function underLoad(fault: () => Promise<void>): Promise<Outcome[]> {
  const load = startSteadyLoad({ baseUrl: gatewayUrl(), key, task });
  try {
    await fault();
    await eventually(ready, 300_000);
    // A little load on the settled release: a fault's late effects land in the record.
    await new Promise((resolve) => setTimeout(resolve, 3000));
  } catch (err) {
    await load.stop();
    throw err;
  }
  return load.stop();
}

interface Container {
  image: string;
  command: string[];
  env: { name: string; value?: string }[];
  readinessProbe?: object;
  startupProbe?: object;
  lifecycle?: object;
}
const gatewayDeployment = () =>
  get(['deployments', '-n', release.namespace, '-l', 'app.kubernetes.io/component=gateway'])[0];
const gatewayContainer = () =>
  (gatewayDeployment().spec as { template: { spec: { containers: Container[] } } }).template.spec
    .containers[0];

/** A rollout of the gateway's Deployment with its container changed by JSON patch `ops`, waited for. */
async function patchGateway(ops: object[]): Promise<void> {
  const name = gatewayDeployment().metadata.name;
  await runAsync('kubectl', [
    'patch',
    'deployment',
    '-n',
    release.namespace,
    name,
    '--type',
    'json',
    '-p',
    JSON.stringify(ops),
  ]);
  await runAsync('kubectl', [
    'rollout',
    'status',
    '-n',
    release.namespace,
    `deployment/${name}`,
    '--timeout=300s',
  ]);
}
const container = '/spec/template/spec/containers/0';
/** The gateway's container as the chart made it, before a test broke it. */
let chartGateway: Container;

beforeAll(async () => {
  release = await installRelease(
    'faults',
    'faults',
    ...['--set', 'services.inferenceDetect.autoscaling.enabled=false'],
    ...['--set', 'services.inferenceDetect.replicas=2'],
    // The load's key may not run out of images for the day: its 429 is no fault's answer.
    ...['--set-string', 'services.quota.env.QUOTA_IMAGE_DAILY=1000000'],
  );
  key = release.createKey('node-faults');
  // A finished task whose results the readers page through.
  task = await createTask('videos/pedestrians_vtest_opencv_10s.mov');
});
afterAll(async () => {
  await db?.destroy();
  if (release) await release.uninstall();
});

async function createTask(clip: string): Promise<string> {
  const form = new FormData();
  form.append('scene_code', 'person_vehicle');
  form.append('file', new Blob([readFileSync(path.join(MEDIA, clip))]), path.basename(clip));
  const created = await eventually(async () => {
    const r = await fetch(`${gatewayUrl()}/v1/vision/video-tasks`, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID() },
    });
    if (r.status !== 201) throw new Error(`create: ${r.status} ${await r.text()}`);
    return (await r.json()) as { task_id: string };
  }).catch((err: Error) => {
    // What the tasks pods said about it.
    const logs = run('kubectl', ['logs', '-n', release.namespace, '-l', 'app.kubernetes.io/component=tasks']);
    throw new Error(`${err.message}\ntasks' logs:\n${logs.split('\n').slice(-40).join('\n')}`);
  });
  return created.task_id;
}

test('under the steady load, every container stays within its memory limit (the figures behind the defaults)', async () => {
  const sampler = sampleUsage(release.namespace);
  const outcomes = await underLoad(() => new Promise((resolve) => setTimeout(resolve, 60_000)));
  const usage = sampler.stop();
  const limits = Object.fromEntries(
    get(['deployments', '-n', release.namespace]).map((d) => {
      const c = (d.spec as { template: { spec: { containers: { name: string; resources: object }[] } } })
        .template.spec.containers[0];
      return [c.name, c.resources as { limits?: { memory?: string } }];
    }),
  );
  const mib = (q = '0') =>
    Number(/^(\d+)Mi$/.exec(q)?.[1] ?? /^(\d+)Gi$/.exec(q)?.[1] ?? 0) * (q.endsWith('Gi') ? 1024 : 1);
  const per = (call: string) => (outcomes.filter((o) => o.call === call).length / 60).toFixed(1);
  console.log(
    `under ${per('image')} image calls (one image each) and ${per('read')} result pages a second, for 60 s:\n` +
      [
        '| component | working set, MiB | RSS, MiB | CPU mean, m | CPU peak, m | memory limit |',
        '|---|---|---|---|---|---|',
      ]
        .concat(
          Object.entries(usage).map(
            ([c, u]) =>
              `| ${c} | ${u.workingSetMiB} | ${u.rssMiB} | ${u.meanMilli} | ${u.peakMilli} | ${limits[c]?.limits?.memory ?? '-'} |`,
          ),
        )
        .join('\n'),
  );
  expect(Object.keys(usage).sort()).toEqual(Object.keys(limits).sort());
  for (const [c, u] of Object.entries(usage))
    expect({ c, fits: u.workingSetMiB < 0.8 * mib(limits[c]?.limits?.memory) }).toEqual({ c, fits: true });
  expect(failures(undocumented(outcomes))).toEqual(failures([]));
});

test("deleting each Deployment's pods in turn loses no call and resets no connection", async () => {
  const deleted: string[] = [];
  const outcomes = await underLoad(async () => {
    for (const d of get(['deployments', '-n', release.namespace])) {
      const [pod] = podsOf(d.metadata.labels?.['app.kubernetes.io/component'] ?? d.metadata.name);
      await runAsync('kubectl', ['delete', 'pod', '-n', release.namespace, pod.metadata.name, '--wait=true']);
      deleted.push(pod.metadata.name);
      await eventually(ready, 300_000);
    }
  });
  expect({
    deleted: deleted.length,
    calls: outcomes.length > 50,
    undocumented: failures(undocumented(outcomes)),
  }).toEqual({
    deleted: 7,
    calls: true,
    undocumented: failures([]),
  });
});

test('an upgrade to a new image tag and its rollback fail no call', async () => {
  // The same image under another tag, in the node's containerd: every pod is replaced.
  ctr(['images', 'tag', '--force', 'localhost/vision:dev', 'localhost/vision:dev-retag']);
  const outcomes = await underLoad(async () => {
    await release.upgrade('--set', 'image.tag=dev-retag');
    await eventually(ready, 300_000);
    await runAsync('helm', ['rollback', release.name, '-n', release.namespace, '--wait', '--timeout', '10m']);
  });
  const images = get(['deployments', '-n', release.namespace]).map(
    (d) =>
      (d.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]
        .image,
  );
  // Zero failed calls: with two replicas and the readiness gate, not even a 503.
  expect({
    rolledBack: [...new Set(images)],
    calls: outcomes.length > 50,
    failed: failures(outcomes.filter((o) => !(o.status! < 300))),
  }).toEqual({ rolledBack: ['localhost/vision:dev'], calls: true, failed: failures([]) });
});

/**
 * The replica that runs the video job of task `id` (the job's id), from the release's database: its replica id
 * (`<pod name>-<8 hex>`), the epoch it took the job at, whether it took it, and the job's status.
 */
async function jobOwner(id: string) {
  db ??= knexFactory({
    client: 'pg',
    connection: `${readStackEnv().pgUrl}/${release.database}`,
    pool: { min: 0, max: 1 },
  });
  const row = (await db.withSchema('inference').table('jobs').where({ job_id: id }).first()) as
    { owner: string | null; epoch: number; taken: boolean; status: string } | undefined;
  if (!row?.owner || !row.taken) throw new Error(`job ${id} taken by no replica: ${JSON.stringify(row)}`);
  return { owner: row.owner, epoch: Number(row.epoch), status: row.status };
}

test("a video task whose inference pod's container is killed mid-task is taken over by another replica, succeeds and is charged once", async () => {
  const api = (p: string) => fetch(`${gatewayUrl()}${p}`, { headers: { authorization: `Bearer ${key}` } });
  const used = async () =>
    ((await (await api('/v1/vision/quota')).json()) as { video_tasks: { used: number } }).video_tasks.used;
  const before = await used();
  const id = await createTask('videos/pedestrians_vtest_opencv.mp4');
  await eventually(
    async () => {
      const t = (await (await api(`/v1/vision/tasks/${id}`)).json()) as { status: string };
      if (t.status !== 'running') throw new Error(t.status);
    },
    300_000,
    1000,
  );
  // The pod that runs the job: two run video jobs, and killing the other one would prove nothing.
  const killed = await eventually(
    async () => {
      const o = await jobOwner(id);
      if (o.status !== 'running') throw new Error(`job ${id} ${o.status} before the kill`);
      return o;
    },
    60_000,
    500,
  );
  const inference = podsOf('inference');
  expect(inference.length).toBeGreaterThanOrEqual(2);
  const pod = inference.find((p) => killed.owner.startsWith(`${p.metadata.name}-`));
  expect({ owner: killed.owner, pod: pod?.metadata.name }).toEqual({
    owner: killed.owner,
    pod: expect.any(String),
  });
  // The container's process killed by the runtime (SIGKILL), as the kernel's OOM killer would: no handover.
  const statuses = (pod!.status as { containerStatuses: { containerID: string }[] }).containerStatuses;
  ctr(['tasks', 'kill', '--signal', 'SIGKILL', statuses[0].containerID.replace(/^containerd:\/\//, '')]);
  // Once its lease runs out (INFERENCE_LEASE_TTL_MS, 8 s), another replica (the other pod, or this pod's container
  // started again, a replica of a new id) takes the job from its last checkpoint, at a higher epoch.
  const taken = await eventually(
    async () => {
      const o = await jobOwner(id);
      if (o.owner === killed.owner) throw new Error(`job ${id} still held by ${o.owner}`);
      return o;
    },
    120_000,
    1000,
  );
  expect(taken.epoch).toBeGreaterThan(killed.epoch);
  const end = await eventually(
    async () => {
      const t = (await (await api(`/v1/vision/tasks/${id}`)).json()) as { status: string; reason?: string };
      if (t.status === 'running' || t.status === 'queued') throw new Error(t.status);
      return t;
    },
    600_000,
    3000,
  );
  // Resumed to its end, not failed, refunded or started again: one unit, as for a task nothing happened to.
  expect(end).toMatchObject({ status: 'succeeded' });
  expect((await used()) - before).toBe(1);
  await eventually(ready, 300_000);
});

test('without the readiness gate, a rollout of a gateway slow to start fails calls', async () => {
  chartGateway = gatewayContainer();
  expect(chartGateway).toMatchObject({
    command: expect.any(Array),
    readinessProbe: expect.any(Object),
    lifecycle: expect.any(Object),
  });
  // Each new pod starts slowly (10 s before its process listens, as on a node whose cores are busy): how long a
  // start takes is what the gate covers, and a quick one on an idle node would leave the break's window to chance.
  const slowStart = ['sh', '-c', `sleep 10; exec ${chartGateway.command.join(' ')}`];
  const outcomes = await underLoad(
    async () =>
      await patchGateway([
        { op: 'remove', path: `${container}/readinessProbe` },
        { op: 'remove', path: `${container}/startupProbe` },
        { op: 'replace', path: `${container}/command`, value: slowStart },
        { op: 'replace', path: `${container}/image`, value: 'localhost/vision:dev-retag' },
      ]),
  );
  expect(undocumented(outcomes).length).toBeGreaterThan(0);
});

test('without the preStop pause and the drain, a rollout and a deletion of the gateway fail calls', async () => {
  // The readiness gate back as the chart has it; the pause and the drain gone.
  const drain = chartGateway.env.findIndex((e) => e.name === 'SHUTDOWN_DRAIN_MS');
  expect(drain).toBeGreaterThanOrEqual(0);
  const outcomes = await underLoad(async () => {
    await patchGateway([
      { op: 'add', path: `${container}/readinessProbe`, value: chartGateway.readinessProbe },
      { op: 'add', path: `${container}/startupProbe`, value: chartGateway.startupProbe },
      { op: 'replace', path: `${container}/command`, value: chartGateway.command },
      { op: 'remove', path: `${container}/lifecycle` },
      { op: 'replace', path: `${container}/env/${drain}/value`, value: '0' },
      { op: 'replace', path: `${container}/image`, value: chartGateway.image },
    ]);
    for (const pod of podsOf('gateway'))
      await runAsync('kubectl', ['delete', 'pod', '-n', release.namespace, pod.metadata.name, '--wait=true']);
  });
  expect(undocumented(outcomes).length).toBeGreaterThan(0);
});
