/**
 * The real node cluster of scripts/kube/node-cluster.sh, as test/cluster uses it: kubectl and helm against it, a
 * release of the chart installed from the service image with the stack's servers as its backends (reached by the
 * pods on the host's end of the node network, VISION_STACK_POD_*), and the public API through Traefik's route.
 * scripts/test-cluster.sh starts the servers and the cluster and sets the environment this module reads.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { readStackEnv } from '../../scripts/distributed/stack-servers';
import { removeOrphanBuckets } from './release-buckets';
import { prepareProduction, PRODUCTION_VALUES, removeProduction } from './production-release';
import { hostIp, need, readyPod, repoRoot, run, runAsync } from './kube-tools';

export * from './kube-tools';

interface DbLogins {
  createDeploymentDatabase(
    pgUrl: string,
    database: string,
  ): Promise<Record<string, { user: string; password: string }>>;
  dropDeploymentDatabase(pgUrl: string, database: string): Promise<void>;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dbLogins = require('../../scripts/distributed/db-logins.js') as DbLogins;

/** The test data's images and clips (../shared, or VISION_SHARED_DIR). */
export const MEDIA = path.join(process.env.VISION_SHARED_DIR ?? path.resolve(repoRoot, '../shared'), 'media');
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
  /** An API key for `subject`, made the documented way: the keys CLI in a gateway pod (docs/KUBERNETES.md). */
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
  // The services with a schema and a login of their own (inference: the job-running pods, not the detect pool).
  const services = ['gateway', 'tasks', 'quota', 'results', 'images', 'inference'];
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
    // (the defaults ask for 3.1 cores). One detect pod, where the chart's default is two: these releases were sized
    // with one (the production-like file keeps its own two).
    services: Object.fromEntries(
      Object.entries(CPU_REQUESTS).map(([svc, cpu]) => [
        svc,
        {
          resources: { requests: { cpu } },
          ...(svc === 'inferenceDetect' && !production ? { autoscaling: { minReplicas: 1 } } : {}),
        },
      ]),
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
        // The webhook receivers of the tests listen on the host, on ports picked when they start: results may reach
        // the host's end of the node network (a test cluster's allowance, with WEBHOOK_ALLOW_PRIVATE_NETWORKS).
        extraWebhookEgress: [{ to: [{ ipBlock: { cidr: `${host}/32` } }] }],
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
