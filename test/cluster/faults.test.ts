/**
 * Faults under a steady, bounded load through the route on the real node (scripts/test-cluster.sh): each
 * Deployment's pods deleted in turn. A caller sees only documented answers (success, or 503 with Retry-After) and
 * no reset connection.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { eventually, gatewayUrl, get, installRelease, MEDIA, run, type Release } from './node-cluster';
import { startSteadyLoad, undocumented } from './steady-load';

jest.setTimeout(1_800_000);

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
  key = release.createKey('node-faults');
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
