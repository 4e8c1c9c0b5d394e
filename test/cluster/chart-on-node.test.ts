/**
 * The chart installed on a real node (scripts/test-cluster.sh) with the production-like values file: every pod
 * started by containerd from the service image, on the stack's real servers. What only the chart decides is checked
 * on the running pods: every Deployment Available, the migration Job done, no restart, non-root on a read-only root
 * filesystem, the decoder confined, the NetworkPolicies' denials.
 */
import { readStackEnv } from '../../scripts/distributed/stack-servers';
import {
  eventually,
  gatewayUrl,
  get,
  installProductionRelease,
  run,
  type KubeObject,
  type Release,
} from './node-cluster';

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
  // The production-like values file, with the Secrets and the models' claim an SRE makes first.
  release = await installProductionRelease('vision', 'vision');
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
  const [tasks] = get(['service', '-n', release.namespace, '-l', 'app.kubernetes.io/component=tasks']);
  const port = (tasks.spec as { ports: { name: string; port: number }[] }).ports.find(
    (p) => p.name === 'http',
  )!.port;
  const out = await eventually(() =>
    run('kubectl', [
      'exec',
      '-n',
      release.namespace,
      gw.metadata.name,
      '--',
      'node',
      '-e',
      `fetch('http://${tasks.metadata.name}:${port}/healthz').then(r=>console.log(r.status),e=>{console.log(e.cause?.code??e.message);process.exit(1)})`,
    ]),
  );
  expect(out.trim()).toBe('200');
});

/**
 * What a TCP connection from a process in `pod` to host:port gets: `open`; `refused`, rejected (ECONNREFUSED: what
 * kube-router does with what no policy allows) or dropped (no answer in 4 s); or another error's code.
 */
function connectFrom(namespace: string, pod: string, host: string, port: number): string {
  const script = `const s=require('net').connect({host:${JSON.stringify(host)},port:${port},timeout:4000});
s.on('connect',()=>{console.log('open');s.destroy()});
s.on('timeout',()=>{console.log('refused');s.destroy()});
s.on('error',(e)=>console.log(e.code==='ECONNREFUSED'?'refused':e.code))`;
  return run('kubectl', ['exec', '-n', namespace, pod, '--', 'node', '-e', script]).trim();
}
const podOf = (component: string) =>
  podsOf(release.namespace).find((p) => p.metadata.labels?.['app.kubernetes.io/component'] === component)!
    .metadata.name;

test('the NetworkPolicies hold on the node: the gateway reaches no Kafka (its neighbours do); tasks and inference reach Postgres; an inference pod reaches its peer, the gateway does not', () => {
  const { pod } = readStackEnv();
  const pg = new URL(pod!.pgUrl);
  const [kafkaHost, kafkaPort] = pod!.kafkaBrokers.split(':');
  const at = (component: string, host: string, port: number, from = podOf(component)) => ({
    component,
    to: `${host}:${port}`,
    got: connectFrom(release.namespace, from, host, port),
  });
  // The job-running inference pods: a call for a job that reached one is sent on to the pod that runs the job.
  const [first, peer] = podsOf(release.namespace).filter(
    (p) => p.metadata.labels?.['app.kubernetes.io/component'] === 'inference',
  );
  expect(peer).toBeDefined();
  const peerIp = (peer.status as { podIP: string }).podIP;
  const peerPort = (
    peer.spec as { containers: { ports: { name: string; containerPort: number }[] }[] }
  ).containers[0].ports.find((p) => p.name === 'http')!.containerPort;
  expect([
    at('inference', pg.hostname, Number(pg.port)),
    at('tasks', pg.hostname, Number(pg.port)),
    at('gateway', kafkaHost, Number(kafkaPort)),
    at('images', kafkaHost, Number(kafkaPort)),
    at('inference', peerIp, peerPort, first.metadata.name),
    at('gateway', peerIp, peerPort),
  ]).toEqual([
    { component: 'inference', to: `${pg.hostname}:${pg.port}`, got: 'open' },
    { component: 'tasks', to: `${pg.hostname}:${pg.port}`, got: 'open' },
    { component: 'gateway', to: `${kafkaHost}:${kafkaPort}`, got: 'refused' },
    { component: 'images', to: `${kafkaHost}:${kafkaPort}`, got: 'open' },
    { component: 'inference', to: `${peerIp}:${peerPort}`, got: 'open' },
    { component: 'gateway', to: `${peerIp}:${peerPort}`, got: 'refused' },
  ]);
});

test('a pod outside the release reaches the gateway only through the Gateway', async () => {
  const outside = `${release.namespace}-outside`;
  run('kubectl', ['create', 'namespace', outside]);
  try {
    run('kubectl', [
      ...['run', 'probe', '-n', outside, '--image', 'localhost/vision:dev', '--image-pull-policy', 'Never'],
      ...['--restart', 'Never', '--command', '--', 'node', '-e', 'setTimeout(() => {}, 600000)'],
    ]);
    await eventually(() => {
      const [p] = get(['pod', 'probe', '-n', outside]);
      if ((p.status as { phase: string }).phase !== 'Running') throw new Error('probe not running');
    });
    const [gw] = get(['service', '-n', release.namespace, '-l', 'app.kubernetes.io/component=gateway']);
    const clusterIp = (gw.spec as { clusterIP: string }).clusterIP;
    const gwPod = get(['pod', '-n', release.namespace, podOf('gateway')])[0].status as { podIP: string };
    const route = new URL(gatewayUrl());
    expect({
      service: connectFrom(outside, 'probe', clusterIp, 8080),
      pod: connectFrom(outside, 'probe', gwPod.podIP, 8080),
      route: connectFrom(outside, 'probe', route.hostname, Number(route.port)),
    }).toEqual({ service: 'refused', pod: 'refused', route: 'open' });
  } finally {
    run('kubectl', ['delete', 'namespace', outside, '--wait=true', '--timeout=120s']);
  }
});
