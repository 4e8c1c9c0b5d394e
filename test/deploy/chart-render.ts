/**
 * The Helm chart rendered as the tests see it: `helm template` for a test cluster, the manifests parsed, and the
 * Secret files a container reads resolved against the rendered Secrets.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from './deploy-support';

export const chartDir = path.join(repoRoot, 'charts/vision');

export type Obj = Record<string, unknown>;
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Obj;
  data?: Record<string, string>;
}

let helm = '';

/**
 * The pinned helm (scripts/ensure-helm.sh, which installs it with `go install` the first time: minutes); call once,
 * in a beforeAll, before runHelm or render.
 */
export function ensureHelm(): string {
  helm ||= execFileSync(path.join(repoRoot, 'scripts/ensure-helm.sh'), {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 18 * 60 * 1000,
  }).trim();
  return helm;
}

/**
 * The Kubernetes release the test clusters run (KUBE_VERSION of scripts/kube/install.sh), which `helm template` and
 * `helm lint` are told: without a cluster to ask, helm checks the chart's kubeVersion against its own built-in
 * default, which a helm built from source (scripts/ensure-helm.sh) leaves at v1.20.0.
 */
export const KUBE_VERSION = (() => {
  const script = readFileSync(path.join(repoRoot, 'scripts/kube/install.sh'), 'utf8');
  const m = /^KUBE_VERSION="\$\{KUBE_VERSION:-(v[0-9.]+)\}"$/m.exec(script);
  if (!m) throw new Error('scripts/kube/install.sh pins no KUBE_VERSION');
  return m[1];
})();

/** helm with `args`; `template` and `lint` for KUBE_VERSION unless the arguments name another `--kube-version`. */
export function runHelm(args: string[]) {
  const offline = ['template', 'lint'].includes(args[0]) && !args.includes('--kube-version');
  const all = offline ? [args[0], '--kube-version', KUBE_VERSION, ...args.slice(1)] : args;
  return spawnSync(helm, all, { cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

/** The chart's development credentials are refused unless allowed (tested on their own below). */
export const DEV_CREDENTIALS = ['--set', 'allowDefaultCredentials=true'];
/** The Secret holding the Kafka brokers' super user, which the migration Job provisions the principals with. */
export const KAFKA_ADMIN_SECRET = 'vision-kafka-admin';
/** Without the brokers' super user, or the explicit flag for brokers without authentication, the render stops. */
export const KAFKA_ADMIN = ['--set', `external.kafka.sasl.superUser.existingSecret=${KAFKA_ADMIN_SECRET}`];
/** A test cluster's values: development credentials allowed, the brokers' super user named. */
export const TEST_CLUSTER = [...DEV_CREDENTIALS, ...KAFKA_ADMIN];

/** `helm template` for a test cluster: the defaults' development credentials allowed. */
export function render(...args: string[]): Manifest[] {
  const r = runHelm(['template', 'vis', chartDir, '--namespace', 'vision', ...TEST_CLUSTER, ...args]);
  if (r.status !== 0) throw new Error(`helm template failed: ${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

/**
 * NOTES.txt as `helm install` prints it, which `helm template` skips: rendered as a ConfigMap of a copy of the chart
 * whose NOTES.txt became a named template.
 */
export function renderNotes(...args: string[]): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vision-notes-'));
  try {
    const copy = path.join(dir, 'vision');
    cpSync(chartDir, copy, { recursive: true });
    const templates = path.join(copy, 'templates');
    const notes = readFileSync(path.join(templates, 'NOTES.txt'), 'utf8');
    rmSync(path.join(templates, 'NOTES.txt'));
    writeFileSync(path.join(templates, '_notes.tpl'), `{{- define "test.notes" -}}\n${notes}{{- end -}}\n`);
    writeFileSync(
      path.join(templates, 'notes.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: notes }\ndata:\n  notes: {{ include "test.notes" . | quote }}\n',
    );
    const r = runHelm(['template', 'vis', copy, '--namespace', 'vision', ...TEST_CLUSTER, ...args]);
    if (r.status !== 0) throw new Error(`helm template failed: ${r.stderr}`);
    const cm = parseAllDocuments(r.stdout)
      .map((d) => d.toJS() as Manifest | null)
      .find((m) => m?.kind === 'ConfigMap' && m.metadata.name === 'notes');
    return cm?.data?.notes ?? '';
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const ofKind = (ms: Manifest[], kind: string) => ms.filter((m) => m.kind === kind);
export const componentOf = (m: { metadata: { labels?: Record<string, string> } }) =>
  m.metadata.labels?.['app.kubernetes.io/component'];

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  ports?: { name: string; containerPort: number }[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
  }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  resources?: { requests?: Obj; limits?: Obj };
  securityContext?: {
    runAsNonRoot?: boolean;
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { drop?: string[] };
  };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
export interface PodSpec {
  securityContext?: { runAsNonRoot?: boolean };
  containers: Container[];
  initContainers?: Container[];
  volumes?: ({ name: string } & Obj)[];
}
export const podOf = (m: Manifest) =>
  (m.spec as { template: { metadata: { labels: Record<string, string> }; spec: PodSpec } }).template;

/** A Secret volume: its Secret and the files (item paths) it projects from the Secret's keys. */
export interface SecretVolume {
  name: string;
  secret?: { secretName: string; items?: { key: string; path: string }[] };
}

/**
 * The Secret files a container's `<KEY>_FILE` variables name: variable, Secret, key, and the rendered
 * Secret's data for it (undefined for a Secret the chart does not render).
 */
export function secretFilesOf(ms: Manifest[], pod: PodSpec, c: Container) {
  return (c.env ?? [])
    .filter((e) => e.name.endsWith('_FILE') && e.value?.startsWith('/var/run/'))
    .map((e) => {
      const file = e.value as string;
      const mount = c.volumeMounts?.find((m) => path.dirname(file) === m.mountPath);
      const volume = pod.volumes?.find((v) => v.name === mount?.name) as SecretVolume | undefined;
      const item = volume?.secret?.items?.find((i) => i.path === path.basename(file));
      if (!mount || !volume?.secret || !item)
        throw new Error(`${c.name}: ${e.name}=${file} is no mounted Secret file`);
      expect({ variable: e.name, readOnly: mount.readOnly }).toEqual({ variable: e.name, readOnly: true });
      const secret = ofKind(ms, 'Secret').find((m) => m.metadata.name === volume.secret?.secretName);
      const raw = secret?.data?.[item.key];
      if (secret && raw === undefined)
        throw new Error(`${c.name}: Secret ${secret.metadata.name} has no key ${item.key}`);
      return {
        variable: e.name,
        setting: e.name.slice(0, -'_FILE'.length),
        secretName: volume.secret.secretName,
        key: item.key,
        value: raw === undefined ? undefined : Buffer.from(raw, 'base64').toString('utf8'),
      };
    });
}
