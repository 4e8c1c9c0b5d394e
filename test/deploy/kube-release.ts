/**
 * Steps of the chart's install on the test cluster, as docs/KUBERNETES.md ("Install on Kubernetes") gives them.
 */
import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { BUS_SERVICES } from '@vision/shared';
import { repoRoot } from './deploy-support';
import { checkRolledOut } from './kube-checks';
import type { Cluster } from './kube-support';

export const chart = 'charts/vision';

function ensureNamespace(k: Cluster, ns: string) {
  if (!k.get(['namespaces']).some((n) => n.metadata.name === ns))
    k.run('kubectl', ['create', 'namespace', ns]);
}

/** `helm install --wait`, then: the hooks ran and succeeded, every Deployment is available, and every object of
 * the release's manifest is stored. */
export function install(k: Cluster, ns: string, values: string[], sets: string[] = []): string[] {
  ensureNamespace(k, ns);
  k.run('helm', [
    'install',
    'vision',
    chart,
    '-n',
    ns,
    ...values.flatMap((v) => ['-f', v]),
    ...sets.flatMap((s) => ['--set', s]),
    '--wait',
    '--timeout',
    '5m',
  ]);
  const status = JSON.parse(k.run('helm', ['status', 'vision', '-n', ns, '-o', 'json'])) as {
    info: { status: string };
    hooks: { name: string; kind: string; last_run: { phase: string } }[];
  };
  expect(status.info.status).toBe('deployed');
  const migrate = status.hooks.find((h) => h.kind === 'Job');
  expect(migrate).toMatchObject({ name: 'vision-migrate', last_run: { phase: 'Succeeded' } });
  // The Job is deleted once it succeeds (hook-delete-policy); its events stay: created its pod, completed.
  const events = k.get([
    'events',
    '-n',
    ns,
    '--field-selector',
    'involvedObject.kind=Job,involvedObject.name=vision-migrate',
  ]);
  expect(events.map((e) => (e as unknown as { reason: string }).reason)).toEqual(
    expect.arrayContaining(['SuccessfulCreate', 'Completed']),
  );
  checkRolledOut(k, ns);
  const manifest = k.run('helm', ['get', 'manifest', 'vision', '-n', ns]);
  const wanted = parseAllDocuments(manifest)
    .map((d) => d.toJS() as { kind: string; metadata: { name: string } } | null)
    .filter((m) => m !== null)
    .map((m) => `${m.kind}/${m.metadata.name}`);
  const objects = JSON.parse(k.run('kubectl', ['get', '-n', ns, '-f', '-', '-o', 'json'], manifest)) as {
    items: { kind: string; metadata: { name: string } }[];
  };
  expect(objects.items.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(wanted.sort());
  return objects.items.map((o) => o.kind);
}

/**
 * The Secret of the Kafka brokers' super user (username, password), which the migration Job alone mounts to provision
 * the services' principals (external.kafka.sasl.superUser.existingSecret).
 */
export function createKafkaAdminSecret(k: Cluster, ns: string) {
  ensureNamespace(k, ns);
  k.run('kubectl', [
    '-n',
    ns,
    'create',
    'secret',
    'generic',
    'vision-kafka-admin',
    '--from-literal=username=admin',
    '--from-literal=password=kafka-admin-password-0123456789',
  ]);
}

/** The Secrets and the models claim an SRE makes before installing with existing-secrets-values.yaml. */
export function createExistingSecrets(k: Cluster, ns: string) {
  createKafkaAdminSecret(k, ns);
  k.run('kubectl', [
    '-n',
    ns,
    'create',
    'secret',
    'generic',
    'vision-secrets',
    // The owner login (the migration Job's), then each service's own (inference: the job-running pods').
    '--from-literal=DATABASE_URL=postgres://vision:pg-password@pg.data.svc:5432/vision',
    ...['gateway', 'tasks', 'quota', 'results', 'images', 'inference'].map(
      (s) =>
        `--from-literal=${s.toUpperCase()}_DATABASE_URL=postgres://vision_${s}:pg-${s}@pg.data.svc:5432/vision`,
    ),
    // Each bus service's Kafka password.
    ...BUS_SERVICES.map(
      (s) => `--from-literal=KAFKA_${s.toUpperCase()}_PASSWORD=kafka-${s}-0123456789abcdef`,
    ),
    '--from-literal=REDIS_URL=redis://:redis-password@redis.data.svc:6379',
    '--from-literal=S3_ACCESS_KEY=vision-access',
    '--from-literal=S3_SECRET_KEY=vision-secret-key-0123456789',
    '--from-literal=TASKS_ADMIN_TOKEN=admin-token-0123456789abcdef0123456789',
  ]);
  k.run(
    'kubectl',
    ['-n', ns, 'apply', '-f', '-'],
    execFileSync(
      process.execPath,
      [path.join(repoRoot, 'scripts/identity-keys.js'), '--kubernetes', 'vision-identity'],
      { encoding: 'utf8' },
    ),
  );
  // kwok has no storage provisioner: a PersistentVolume made for the claim (the walkthrough's NFS volume).
  k.run(
    'kubectl',
    ['apply', '-f', '-'],
    `
apiVersion: v1
kind: PersistentVolume
metadata: { name: ${ns}-vision-models }
spec:
  capacity: { storage: 1Gi }
  accessModes: [ReadOnlyMany]
  storageClassName: ''
  claimRef: { namespace: ${ns}, name: vision-models }
  nfs: { server: nfs.example.com, path: /exports/vision-models }
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: vision-models, namespace: ${ns} }
spec:
  accessModes: [ReadOnlyMany]
  storageClassName: ''
  volumeName: ${ns}-vision-models
  resources: { requests: { storage: 1Gi } }
`,
  );
}

/** Runs the test pod's command with the target replaced by `url`; resolves to its exit code. */
export async function runTestCommand(command: string[], url: string): Promise<number> {
  const [, flag, script] = command;
  try {
    await promisify(execFile)(process.execPath, [flag, script, url], { timeout: 20_000 });
    return 0;
  } catch (err) {
    return (err as { code?: number }).code ?? -1;
  }
}
