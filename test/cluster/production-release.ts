/**
 * What an SRE makes before installing with charts/vision/ci/production-values.yaml (docs/KUBERNETES.md), made on the
 * node from the stack's servers: the Secret `vision-secrets` with every login and password (secrets.existingSecret),
 * the identity keys' Secret `vision-identity` (scripts/identity-keys.js), the brokers' super user in
 * `vision-kafka-admin`, and the models' claim `vision-models` on a volume of the node. Then the values that only this
 * node decides: where its servers are, no operator CRDs, two replicas where the file asks three (two cores).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUS_SERVICES } from '@vision/shared';
import { repoRoot, run } from './kube-tools';

export const PRODUCTION_VALUES = path.join(repoRoot, 'charts/vision/ci/production-values.yaml');
const SHARED_MODELS = path.join(
  process.env.VISION_SHARED_DIR ?? path.resolve(repoRoot, '../shared'),
  'models',
);

export interface ProductionLogins {
  ownerUrl: string;
  serviceUrls: Record<string, string>;
  redisUrl: string;
  s3AccessKey: string;
  s3SecretKey: string;
  kafkaAdmin: { username: string; password: string };
}

/** Makes the Secrets and the models' claim of `namespace`; returns what `values` must say instead of the file. */
export function prepareProduction(
  namespace: string,
  logins: ProductionLogins,
  values: Record<string, unknown>,
) {
  const secret = (name: string, literals: Record<string, string>) =>
    run('kubectl', [
      ...['create', 'secret', 'generic', name, '-n', namespace],
      ...Object.entries(literals).map(([k, v]) => `--from-literal=${k}=${v}`),
    ]);
  secret('vision-kafka-admin', logins.kafkaAdmin);
  secret('vision-secrets', {
    DATABASE_URL: logins.ownerUrl,
    ...Object.fromEntries(
      Object.entries(logins.serviceUrls).map(([s, u]) => [`${s.toUpperCase()}_DATABASE_URL`, u]),
    ),
    ...Object.fromEntries(
      BUS_SERVICES.map((s) => [`KAFKA_${s.toUpperCase()}_PASSWORD`, randomBytes(18).toString('base64url')]),
    ),
    REDIS_URL: logins.redisUrl,
    S3_ACCESS_KEY: logins.s3AccessKey,
    S3_SECRET_KEY: logins.s3SecretKey,
    TASKS_ADMIN_TOKEN: randomBytes(24).toString('base64url'),
  });
  const identity = execFileSync(
    process.execPath,
    [path.join(repoRoot, 'scripts/identity-keys.js'), '--kubernetes', 'vision-identity'],
    { encoding: 'utf8' },
  );
  run('kubectl', ['apply', '-n', namespace, '-f', '-'], identity);
  // The models on a directory of the node (the kubelet runs on this machine's filesystem), readable by uid 1000.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vision-node-models-'));
  chmodSync(dir, 0o755);
  for (const f of [
    path.join(repoRoot, 'models/fire_smoke_yolox_nano.onnx'),
    path.join(repoRoot, 'models/fire_smoke_yolox_nano.labels.txt'),
    path.join(repoRoot, 'models/fire_smoke_yolox_nano.json'),
    path.join(SHARED_MODELS, 'yolox_nano.onnx'),
    path.join(SHARED_MODELS, 'yolox_nano.labels.txt'),
  ]) {
    copyFileSync(f, path.join(dir, path.basename(f)));
    chmodSync(path.join(dir, path.basename(f)), 0o644);
  }
  run(
    'kubectl',
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'v1',
          kind: 'PersistentVolume',
          metadata: { name: `${namespace}-vision-models` },
          spec: {
            capacity: { storage: '1Gi' },
            accessModes: ['ReadOnlyMany'],
            storageClassName: '',
            claimRef: { namespace, name: 'vision-models' },
            hostPath: { path: dir, type: 'Directory' },
          },
        },
        {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name: 'vision-models', namespace },
          spec: {
            accessModes: ['ReadOnlyMany'],
            storageClassName: '',
            volumeName: `${namespace}-vision-models`,
            resources: { requests: { storage: '1Gi' } },
          },
        },
      ],
    }),
  );
  const external = values.external as Record<string, Record<string, unknown>>;
  const services = values.services as Record<string, Record<string, unknown>>;
  const twoOf = (svc: string, autoscaled: boolean) => {
    services[svc] = { ...services[svc], replicas: 2 };
    if (autoscaled) services[svc].autoscaling = { minReplicas: 2 };
  };
  for (const svc of ['gateway', 'results', 'images']) twoOf(svc, true);
  for (const svc of ['tasks', 'quota']) twoOf(svc, false);
  // inference and inferenceDetect: the file's two (minReplicas 2). The Secret holds INFERENCE_DATABASE_URL, the
  // job-running pods' login (logins.serviceUrls.inference); the detect pool has none.
  return {
    ...values,
    imagePullSecrets: [],
    external: {
      ...external,
      // The logins are the Secret's; the roles are this database's.
      postgres: { url: '', serviceUrls: {}, serviceRoles: external.postgres.serviceRoles },
      redis: { url: '' },
      kafka: {
        ...external.kafka,
        replicationFactor: 1,
        sasl: { superUser: { existingSecret: 'vision-kafka-admin' } },
      },
      s3: { endpoint: external.s3.endpoint, bucket: external.s3.bucket, region: 'us-east-1' },
      otlp: { endpoint: '' },
    },
    route: { ...(values.route as object), parentRefs: [], hostnames: [] },
    // No Prometheus Operator on the node: its CRDs are not installed.
    serviceMonitor: { enabled: false },
    prometheusRule: { enabled: false },
  };
}

/** Removes the claim's volume (cluster-wide) once the namespace is gone. */
export function removeProduction(namespace: string): void {
  run('kubectl', [
    'delete',
    'persistentvolume',
    `${namespace}-vision-models`,
    '--ignore-not-found',
    '--wait=false',
  ]);
}
