/**
 * The chart installed on a real node (scripts/test-cluster.sh): every pod started by containerd from the service
 * image, on the stack's real servers. What only the chart decides is checked on the running pods: every Deployment
 * Available, the migration Job done, no restart, non-root on a read-only root filesystem, the decoder confined.
 */
import { eventually, get, installRelease, run, type KubeObject, type Release } from './node-cluster';

jest.setTimeout(900_000);

interface PodStatus {
  phase: string;
  containerStatuses?: { name: string; restartCount: number; ready: boolean }[];
}
interface PodSpec {
  containers: {
    name: string;
    securityContext?: { readOnlyRootFilesystem?: boolean; runAsNonRoot?: boolean };
  }[];
  securityContext?: { runAsUser?: number; runAsNonRoot?: boolean };
}
const podsOf = (ns: string) => get(['pods', '-n', ns]).filter((p) => !p.metadata.labels?.['job-name']);

let release: Release;
beforeAll(async () => {
  release = await installRelease('vision', 'vision');
});
afterAll(async () => {
  if (release) await release.uninstall();
});

test('every Deployment is Available with all its replicas', () => {
  for (const d of get(['deployments', '-n', release.namespace])) {
    const spec = d.spec as { replicas: number };
    const status = d.status as {
      availableReplicas?: number;
      conditions?: { type: string; status: string }[];
    };
    expect({ name: d.metadata.name, available: status.availableReplicas }).toEqual({
      name: d.metadata.name,
      available: spec.replicas,
    });
    expect(status.conditions?.find((c) => c.type === 'Available')?.status).toBe('True');
  }
});

test('the migration Job completed (its pod ran to Succeeded)', () => {
  const events = run('kubectl', ['get', 'events', '-n', release.namespace, '-o', 'json']);
  const parsed = JSON.parse(events) as {
    items: { involvedObject: { kind: string; name: string }; reason: string }[];
  };
  const jobDone = parsed.items.filter((e) => e.involvedObject.kind === 'Job' && e.reason === 'Completed');
  expect(jobDone.length).toBeGreaterThanOrEqual(1);
});

test('no container restarted', () => {
  for (const p of podsOf(release.namespace)) {
    const status = p.status as unknown as PodStatus;
    for (const c of status.containerStatuses ?? [])
      expect({ pod: p.metadata.name, container: c.name, restarts: c.restartCount }).toEqual({
        pod: p.metadata.name,
        container: c.name,
        restarts: 0,
      });
  }
});

test('every pod runs as a non-root user on a read-only root filesystem, as the kernel sees it', () => {
  for (const p of podsOf(release.namespace)) {
    const spec = p.spec as unknown as PodSpec;
    for (const c of spec.containers) {
      const uid = run('kubectl', [
        'exec',
        '-n',
        release.namespace,
        p.metadata.name,
        '-c',
        c.name,
        '--',
        'id',
        '-u',
      ]).trim();
      expect({ pod: p.metadata.name, uid }).toEqual({ pod: p.metadata.name, uid: '1000' });
      // The root filesystem is mounted read-only: a write there fails with EROFS, /tmp (an emptyDir) takes it.
      const write = (file: string) =>
        run('kubectl', [
          'exec',
          '-n',
          release.namespace,
          p.metadata.name,
          '-c',
          c.name,
          '--',
          'node',
          '-e',
          `try{require('fs').writeFileSync('${file}','x');console.log('ok')}catch(e){console.log(e.code)}`,
        ]).trim();
      expect({ pod: p.metadata.name, root: write('/app-write-check') }).toEqual({
        pod: p.metadata.name,
        root: 'EROFS',
      });
      expect({ pod: p.metadata.name, tmp: write('/tmp/write-check') }).toEqual({
        pod: p.metadata.name,
        tmp: 'ok',
      });
    }
  }
});

test('no pod logs its decoder as UNCONFINED', () => {
  for (const p of podsOf(release.namespace)) {
    const logs = run('kubectl', ['logs', '-n', release.namespace, p.metadata.name, '--all-containers']);
    expect({ pod: p.metadata.name, unconfined: /UNCONFINED/.test(logs) }).toEqual({
      pod: p.metadata.name,
      unconfined: false,
    });
  }
});

test('the pods resolve each other through cluster DNS and reach the gateway Service', async () => {
  const [gw] = podsOf(release.namespace).filter(
    (p: KubeObject) => p.metadata.labels?.['app.kubernetes.io/component'] === 'gateway',
  );
  const out = await eventually(() =>
    run('kubectl', [
      'exec',
      '-n',
      release.namespace,
      gw.metadata.name,
      '--',
      'node',
      '-e',
      `fetch('http://vision-tasks:8080/healthz').then(r=>console.log(r.status),e=>{console.log(e.cause?.code??e.message);process.exit(1)})`,
    ]),
  );
  expect(out.trim()).toBe('200');
});
