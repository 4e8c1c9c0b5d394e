/**
 * The real node cluster of scripts/kube/node-cluster.sh, as test/cluster uses it: kubectl and helm against it, a
 * release of the chart installed from the service image with the stack's servers as its backends (reached by the
 * pods on the host's end of the node network, VISION_STACK_POD_*), and the public API through Traefik's route.
 * scripts/test-cluster.sh starts the servers and the cluster and sets the environment this module reads.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { readStackEnv } from '../../scripts/distributed/stack-servers';
import { removeOrphanBuckets } from './release-buckets';
import { prepareProduction, PRODUCTION_VALUES, removeProduction } from './production-release';

interface DbLogins {
  createDeploymentDatabase(
    pgUrl: string,
    database: string,
  ): Promise<Record<string, { user: string; password: string }>>;
  dropDeploymentDatabase(pgUrl: string, database: string): Promise<void>;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dbLogins = require('../../scripts/distributed/db-logins.js') as DbLogins;

export const repoRoot = path.resolve(__dirname, '../..');
/** The test data's images and clips (../shared, or VISION_SHARED_DIR). */
export const MEDIA = path.join(process.env.VISION_SHARED_DIR ?? path.resolve(repoRoot, '../shared'), 'media');
export const need = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run this file with scripts/test-cluster.sh`);
  return v;
};
export const gatewayUrl = (): string => need('VISION_KUBE_GATEWAY_URL');
export const hostIp = (): string => need('VISION_KUBE_HOST_IP');
const helmBin = (): string => need('VISION_HELM');
export const kubeBin = (): string =>
  path.join(process.env.VISION_KUBE_DIR ?? path.join(os.homedir(), '.cache/vision-kube'), 'bin');
const kubectlBin = (): string => path.join(kubeBin(), 'kubectl');

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** Runs kubectl or helm; throws with its output unless it exits 0. */
export function run(tool: 'kubectl' | 'helm', args: string[], input?: string): string {
  const bin = tool === 'helm' ? helmBin() : kubectlBin();
  const r = spawnSync(bin, args, { cwd: repoRoot, input, encoding: 'utf8', maxBuffer: 256 << 20 });
  if (r.status !== 0)
    throw new Error(`${tool} ${args.join(' ')} exited ${r.status}:\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/**
 * Runs kubectl or helm as run() does, without blocking the event loop: what waits on the cluster (a rollout, a pod's
 * termination) while a load runs in the same process.
 */
export function runAsync(tool: 'kubectl' | 'helm', args: string[]): Promise<string> {
  const child = spawn(tool === 'helm' ? helmBin() : kubectlBin(), args, { cwd: repoRoot });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`${tool} ${args.join(' ')} exited ${code}:\n${err}${out}`)),
    );
  });
}

/** Runs ctr against the node's containerd, in the namespace of Kubernetes' images and containers (k8s.io). */
export function ctr(args: string[]): string {
  const socket = path.join(need('VISION_KUBE_WORK'), 'containerd/containerd.sock');
  const r = spawnSync(path.join(kubeBin(), 'ctr'), ['--address', socket, '-n', 'k8s.io', ...args], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`ctr ${args.join(' ')} exited ${r.status}:\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

export function get(args: string[]): KubeObject[] {
  const parsed = JSON.parse(run('kubectl', ['get', ...args, '-o', 'json'])) as KubeObject & {
    items?: KubeObject[];
  };
  return parsed.items ?? [parsed];
}

/** The name of a running, ready pod of `component` in `namespace` that is not being deleted. */
export function readyPod(namespace: string, component: string): string {
  const ready = get(['pods', '-n', namespace, '-l', `app.kubernetes.io/component=${component}`]).find(
    (p) =>
      !p.metadata.deletionTimestamp &&
      (p.status as { conditions?: { type: string; status: string }[] }).conditions?.some(
        (c) => c.type === 'Ready' && c.status === 'True',
      ),
  );
  if (!ready) throw new Error(`no ready ${component} pod in ${namespace}`);
  return ready.metadata.name;
}

/** Polls `check` (which throws while not yet true) until it passes or `ms` runs out; rethrows the last error. */
export async function eventually<T>(check: () => T | Promise<T>, ms = 180_000, every = 2000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > end) throw err;
      await new Promise((resolve) => setTimeout(resolve, every));
    }
  }
}

/**
 * CPU requests on the two-core test node (each service's memory request and every limit stay the chart's): two
 * releases side by side, each with a rollout's extra pod and its migration Job, fit in its two cores.
 */
const CPU_REQUESTS: Record<string, string> = {
  gateway: '25m',
  tasks: '25m',
  quota: '10m',
  results: '25m',
  images: '50m',
  inference: '100m',
  inferenceDetect: '100m',
};

export interface Release {
  name: string;
  namespace: string;
  database: string;
  values: string;
  /** An API key for `subject`, made the documented way: the keys CLI in a gateway pod (docs/DEPLOYMENT.md). */
  createKey(subject: string): string;
  /** helm upgrade --install with the release's values and more arguments (the event loop keeps turning). */
  upgrade(...args: string[]): Promise<string>;
  uninstall(): Promise<void>;
}

/**
 * Installs the chart as `name` in `namespace` (created), on a database of its own with a login per service, the
 * brokers' super user in a Secret of its own, and the stack's servers as seen from the pods. `extra`: more helm
 * arguments before the release's own values file (`-f` the production-like file, `--set` a value).
 */
export async function installRelease(name: string, namespace: string, ...extra: string[]): Promise<Release> {
  return install(name, namespace, false, extra);
}

/**
 * Installs the chart as installRelease does, with charts/vision/ci/production-values.yaml and what an SRE makes for
 * it (production-release.ts): its Secrets made beforehand, the models on a claim, two replicas where it asks three.
 */
export async function installProductionRelease(name: string, namespace: string): Promise<Release> {
  return install(name, namespace, true, ['-f', PRODUCTION_VALUES]);
}

async function install(
  name: string,
  namespace: string,
  production: boolean,
  extra: string[],
): Promise<Release> {
  const env = readStackEnv();
  const pod = env.pod;
  if (!pod || !env.kafkaSasl)
    throw new Error('the stack does not listen for pods: run this file with scripts/test-cluster.sh');
  const pgUrl = env.pgUrl;
  const podPg = new URL(pod.pgUrl);
  await removeOrphanBuckets();
  const database = `vision_node_${name.replace(/[^a-z0-9]/g, '_')}_${randomBytes(3).toString('hex')}`;
  const logins = await dbLogins.createDeploymentDatabase(pgUrl, database);
  const url = (who: string) => {
    const u = new URL(podPg.toString());
    u.username = encodeURIComponent(logins[who].user);
    u.password = encodeURIComponent(logins[who].password);
    u.pathname = `/${database}`;
    return u.toString();
  };
  const services = ['gateway', 'tasks', 'quota', 'results', 'images'];
  run('kubectl', ['create', 'namespace', namespace]);
  run('kubectl', [
    'create',
    'secret',
    'generic',
    'kafka-admin',
    '-n',
    namespace,
    `--from-literal=username=${env.kafkaSasl.username}`,
    `--from-literal=password=${env.kafkaSasl.password}`,
  ]);
  const host = hostIp();
  const port = (u: string) => Number(new URL(u).port);
  const backend = (p: number) => ({
    to: [{ ipBlock: { cidr: `${host}/32` } }],
    ports: [{ port: p, protocol: 'TCP' }],
  });
  const values = {
    image: {
      repository: 'localhost/vision',
      tag: process.env.VISION_IMAGE_TAG ?? 'dev',
      pullPolicy: 'Never',
    },
    external: {
      postgres: {
        url: url('owner'),
        serviceUrls: Object.fromEntries(services.map((s) => [s, url(s)])),
        serviceRoles: Object.fromEntries(services.map((s) => [s, logins[s].user])),
      },
      redis: { url: pod.redisUrl },
      kafka: {
        brokers: [pod.kafkaBrokers],
        topicPartitions: 2,
        sasl: { superUser: { existingSecret: 'kafka-admin' } },
      },
      s3: {
        endpoint: pod.s3Endpoint,
        bucket: database.replace(/_/g, '-'),
        accessKey: env.s3AccessKey,
        secretKey: env.s3SecretKey,
      },
    },
    // The node has two cores: the CPU requests are scaled down to fit every pod, a rollout's extra pod included
    // (the defaults ask for 3.1 cores).
    services: Object.fromEntries(
      Object.entries(CPU_REQUESTS).map(([svc, cpu]) => [svc, { resources: { requests: { cpu } } }]),
    ),
    migrations: { resources: { requests: { cpu: '10m' } } },
    // The way in: a Gateway of the release for Traefik's "web" entry point (a process of the node, so the gateway
    // admits it by the address it reaches pods from).
    route: { enabled: true, gateway: { create: true, className: 'traefik', port: 8000 } },
    networkPolicy: {
      gatewayFrom: [{ ipBlock: { cidr: `${need('VISION_KUBE_BRIDGE_IP')}/32` } }],
      streamEgress: {
        // Cluster DNS answers on the node's address (CoreDNS is a process of the node, behind kube-dns).
        dns: {
          to: [{ namespaceSelector: {} }, { ipBlock: { cidr: `${need('VISION_KUBE_NODE_IP')}/32` } }],
          ports: [
            { port: 53, protocol: 'UDP' },
            { port: 53, protocol: 'TCP' },
          ],
        },
        backends: {
          postgres: backend(port(pod.pgUrl)),
          kafka: backend(Number(pod.kafkaBrokers.split(':')[1])),
          s3: backend(port(pod.s3Endpoint)),
          redis: backend(port(pod.redisUrl)),
          otlp: { to: [] },
        },
      },
    },
  };
  // --- Traces: while the stack's Jaeger takes OTLP/HTTP on the host's end (scripts/stack/jaeger-pods.yaml), every
  // pod exports there, and the pods whose egress is limited may reach it.
  if (pod.otlpEndpoint) {
    Object.assign(values.external, { otlp: { endpoint: pod.otlpEndpoint } });
    Object.assign(values.networkPolicy.streamEgress.backends, { otlp: backend(port(pod.otlpEndpoint)) });
  }
  // --- end traces
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vision-node-release-'));
  const valuesFile = path.join(dir, 'values.json');
  const given = production
    ? prepareProduction(
        namespace,
        {
          ownerUrl: url('owner'),
          serviceUrls: Object.fromEntries(services.map((s) => [s, url(s)])),
          redisUrl: pod.redisUrl,
          s3AccessKey: env.s3AccessKey,
          s3SecretKey: env.s3SecretKey,
          kafkaAdmin: env.kafkaSasl,
        },
        values,
      )
    : values;
  writeFileSync(valuesFile, JSON.stringify(given, null, 2));
  const chart = path.join(repoRoot, 'charts/vision');
  const upgrade = (...args: string[]) =>
    runAsync('helm', [
      'upgrade',
      '--install',
      name,
      chart,
      '-n',
      namespace,
      ...extra,
      '-f',
      valuesFile,
      '--wait',
      '--timeout',
      '10m',
      ...args,
    ]);
  await upgrade();
  return {
    name,
    namespace,
    database,
    values: valuesFile,
    upgrade,
    createKey(subject) {
      const out = run('kubectl', [
        ...['exec', '-n', namespace, readyPod(namespace, 'gateway'), '--'],
        ...['node', 'services/gateway/dist/keys-cli.js', 'create', '--subject', subject],
      ]);
      const key = /^key:\s+(\S+)$/m.exec(out)?.[1];
      if (!key) throw new Error(`the keys CLI printed no key:\n${out}`);
      return key;
    },
    async uninstall() {
      run('helm', ['uninstall', name, '-n', namespace, '--wait', '--timeout', '3m']);
      run('kubectl', ['delete', 'namespace', namespace, '--wait=true', '--timeout=180s']);
      if (production) removeProduction(namespace);
      await dbLogins.dropDeploymentDatabase(pgUrl, database);
      await removeOrphanBuckets();
    },
  };
}
