/**
 * The Helm chart, checked with the real helm (pinned, installed by scripts/ensure-helm.sh with
 * `go install` the first time, which takes minutes): lint, render with the default and the
 * production-like values, then assertions over the rendered manifests.
 */
import { createPrivateKey } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { BlockList, isIPv4 } from 'node:net';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import {
  BUS_GRANTS,
  BUS_SERVICES,
  busName,
  busTopics,
  IDENTITY_ISSUERS,
  JOB_GRANT_READERS,
  IDENTITY_ROUTES,
  loadConfig,
  loadServiceIdentity,
  signIdentity,
  verifyIdentity,
} from '@vision/shared';
import {
  CALLERS,
  SHAPES,
  type ServiceName,
  repoRoot,
  requiredVariables,
  SERVICE_PORTS,
  validateEnv,
} from './deploy-support';
import {
  chartDir,
  componentOf,
  DEV_CREDENTIALS,
  ensureHelm,
  KAFKA_ADMIN,
  KUBE_VERSION,
  KAFKA_ADMIN_SECRET,
  type Container,
  type SecretVolume,
  type Manifest,
  type Obj,
  ofKind,
  podOf,
  type PodSpec,
  render,
  renderNotes,
  runHelm,
  secretFilesOf,
  TEST_CLUSTER,
} from './chart-render';
import { gatewayRedisKeys } from '../../services/gateway/src/domain/redis-keys';

jest.setTimeout(20 * 60 * 1000);

const productionValues = path.join(chartDir, 'ci/production-values.yaml');

const matches = (selector: Record<string, string> | undefined, labels: Record<string, string>) =>
  Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: {
    key: string;
    operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
    values?: string[];
  }[];
}
/** Kubernetes label selector semantics: every matchLabels pair and every expression holds ({} selects all). */
const selects = (selector: LabelSelector, labels: Record<string, string>) =>
  matches(selector.matchLabels, labels) &&
  (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    const has = Object.hasOwn(labels, key);
    if (operator === 'Exists') return has;
    if (operator === 'DoesNotExist') return !has;
    if (operator === 'In') return has && values.includes(labels[key]);
    return !has || !values.includes(labels[key]);
  });

/** The service a component's container runs (inference-detect runs the inference service). */
const serviceOf = (c: Container): ServiceName => {
  const m = /^services\/([a-z]+)\/dist\/main\.js$/.exec(c.command?.[1] ?? '');
  if (!m || c.command?.[0] !== 'node') throw new Error(`unexpected command ${JSON.stringify(c.command)}`);
  return m[1] as ServiceName;
};

function checkDeployments(ms: Manifest[]) {
  const deployments = ofKind(ms, 'Deployment');
  expect(deployments.map(componentOf).sort()).toEqual(
    expect.arrayContaining(['gateway', 'images', 'inference', 'quota', 'results', 'tasks']),
  );
  for (const d of deployments) {
    const pod = podOf(d);
    expect(pod.spec.securityContext?.runAsNonRoot).toBe(true);
    for (const c of [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]) {
      const where = `${d.metadata.name}/${c.name}`;
      expect({ where, sc: c.securityContext }).toMatchObject({
        where,
        sc: { runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false },
      });
      expect(c.securityContext?.capabilities?.drop).toEqual(['ALL']);
      expect(c.resources?.requests).toEqual(
        expect.objectContaining({ cpu: expect.anything(), memory: expect.anything() }),
      );
      expect(c.resources?.limits).toEqual(expect.objectContaining({ memory: expect.anything() }));
      // A writable /tmp on a read-only root filesystem.
      const tmp = c.volumeMounts?.find((v) => v.mountPath === '/tmp');
      expect(tmp).toBeDefined();
      expect(pod.spec.volumes?.find((v) => v.name === tmp?.name)).toHaveProperty('emptyDir');
    }
    const [main] = pod.spec.containers;
    expect(main.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(main.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(main.ports?.map((p) => p.name)).toContain('http');
    serviceOf(main);
  }
}

/** The address the downward API gives a pod in these checks. */
const POD_IP = '10.42.0.7';

/**
 * The environment a Deployment's main container gets, resolved against the rendered ConfigMap and Secret:
 * a `<KEY>_FILE` variable naming a mounted Secret file counts as KEY with the file's content.
 */
function environmentOf(ms: Manifest[], d: Manifest): Record<string, string> {
  const pod = podOf(d).spec;
  const [c] = pod.containers;
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) {
    const cm = ofKind(ms, 'ConfigMap').find((m) => m.metadata.name === from.configMapRef?.name);
    if (!cm) throw new Error(`${d.metadata.name}: ConfigMap ${from.configMapRef?.name} is not rendered`);
    Object.assign(env, cm.data);
  }
  for (const e of c.env ?? []) {
    // The downward API as the kubelet fills it (a pod's address), and $(VAR) of a variable defined before.
    const field = (e.valueFrom as { fieldRef?: { fieldPath: string } } | undefined)?.fieldRef?.fieldPath;
    if (field === 'status.podIP') env[e.name] = POD_IP;
    if (e.value !== undefined)
      env[e.name] = e.value.replace(/\$\(([A-Z0-9_]+)\)/g, (m, v: string) => env[v] ?? m);
  }
  for (const f of secretFilesOf(ms, pod, c)) {
    delete env[f.variable];
    env[f.setting] = f.value ?? `<from existing Secret ${f.secretName}>`;
  }
  return env;
}

/**
 * The service's own loader reading a pod's Secret files: each file written out as the kubelet projects it,
 * `<KEY>_FILE` pointed there, and the schema validated with every other variable the pod gets.
 */
function loadWithSecretFiles(ms: Manifest[], d: Manifest): Record<string, unknown> {
  const pod = podOf(d).spec;
  const [c] = pod.containers;
  const env = environmentOf(ms, d);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vision-chart-secrets-'));
  try {
    for (const f of secretFilesOf(ms, pod, c)) {
      delete env[f.setting];
      const file = path.join(dir, f.key);
      writeFileSync(file, `${f.value ?? ''}\n`);
      env[f.variable] = file;
    }
    return loadConfig(SHAPES[serviceOf(c)], env);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every key the chart's Secret may hold. */
const SECRET_KEYS = [
  'DATABASE_URL',
  'GATEWAY_DATABASE_URL',
  'TASKS_DATABASE_URL',
  'QUOTA_DATABASE_URL',
  'RESULTS_DATABASE_URL',
  'IMAGES_DATABASE_URL',
  'INFERENCE_DATABASE_URL',
  'REDIS_URL',
  'S3_ACCESS_KEY',
  'S3_SECRET_KEY',
  'TASKS_ADMIN_TOKEN',
  'VISION_API_KEYS',
  'RESULTS_CURSOR_SECRET',
  'RESULTS_WEBHOOK_SECRET_KEY',
  'TASKS_STREAM_URL_KEY',
  'KAFKA_SASL_PASSWORD',
  ...BUS_SERVICES.map((s) => `KAFKA_${s.toUpperCase()}_PASSWORD`),
];

/** No Secret key reaches a container as an environment value (env, secretKeyRef or envFrom). */
function checkNoSecretEnv(ms: Manifest[]) {
  const pods = [
    ...ofKind(ms, 'Deployment').map((d) => ({ name: d.metadata.name, spec: podOf(d).spec })),
    ...ofKind(ms, 'Job').map((j) => ({
      name: j.metadata.name,
      spec: (j.spec as { template: { spec: PodSpec } }).template.spec,
    })),
  ];
  expect(pods.length).toBeGreaterThan(6);
  for (const pod of pods)
    for (const c of [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]) {
      const where = `${pod.name}/${c.name}`;
      const fromSecret = (c.env ?? []).filter((e) => e.valueFrom?.secretKeyRef).map((e) => e.name);
      const plain = (c.env ?? []).filter((e) => SECRET_KEYS.includes(e.name)).map((e) => e.name);
      expect({ where, fromSecret, plain }).toEqual({ where, fromSecret: [], plain: [] });
      expect({ where, envFrom: (c.envFrom ?? []).filter((e) => e.secretRef) }).toEqual({
        where,
        envFrom: [],
      });
    }
}

/** The Secret keys each component's pod mounts as files. */
const secretKeysByComponent = (ms: Manifest[]) =>
  Object.fromEntries(
    ofKind(ms, 'Deployment').map((d) => {
      const pod = podOf(d).spec;
      return [
        componentOf(d),
        secretFilesOf(ms, pod, pod.containers[0])
          .map((f) => f.key)
          .sort(),
      ];
    }),
  );

function checkEnvironment(ms: Manifest[], existingSecret: boolean) {
  for (const d of ofKind(ms, 'Deployment')) {
    const [c] = podOf(d).spec.containers;
    const service = serviceOf(c);
    const env = environmentOf(ms, d);
    // A replica that keeps its jobs in its own memory (the detect pool) opens no database.
    const memory = service === 'inference' && env.INFERENCE_JOB_STORE === 'memory';
    const missing = requiredVariables(service).filter((v) => !env[v] && !(memory && v === 'DATABASE_URL'));
    expect({ deployment: d.metadata.name, missing }).toEqual({ deployment: d.metadata.name, missing: [] });
    expect(env.VISION_MODE).toBe('distributed');
    if (!existingSecret) {
      expect(() => validateEnv(service, env)).not.toThrow();
      // Read through <KEY>_FILE, the service gets the configuration it would get from the values themselves.
      expect(loadWithSecretFiles(ms, d)).toEqual(loadConfig(SHAPES[service], env));
    }
    // Peer URLs name the peer's Service and port.
    for (const [name, value] of Object.entries(env)) {
      const m = /^(TASKS|QUOTA|RESULTS|IMAGES|INFERENCE)_URL$/.exec(name);
      if (!m) continue;
      const url = new URL(value);
      const target = ofKind(ms, 'Service').find((s) => s.metadata.name === url.hostname);
      expect({ name, found: Boolean(target) }).toEqual({ name, found: true });
      const ports = (target!.spec as { ports: { port: number }[] }).ports.map((p) => String(p.port));
      expect(ports).toContain(url.port);
      expect(
        serviceOf(
          podOf(ofKind(ms, 'Deployment').find((x) => componentOf(x) === componentOf(target!))!).spec
            .containers[0],
        ),
      ).toBe(m[1].toLowerCase());
    }
    if (service === 'inference') {
      // A models volume, when there is one, is where the service reads; without one, the image's own copies.
      const mount = c.volumeMounts?.find((v) => v.mountPath === env.VISION_MODELS_DIR);
      const volume = podOf(d).spec.volumes?.find((v) => v.name === 'models');
      expect(mount?.name).toBe(volume ? 'models' : undefined);
      if (!volume)
        expect(readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8')).toContain(
          `COPY --from=models ${env.VISION_MODELS_DIR} ${env.VISION_MODELS_DIR}`,
        );
    }
  }
}

/**
 * The job-running inference Deployment (docs/OPERATIONS.md, "Scaling video jobs"): two or more pods sharing the video
 * jobs through their own database login, rolled one new pod at a time, each advertising its own address to the
 * others, with the grace to hand its jobs over, a PodDisruptionBudget, and NetworkPolicies that let a pod reach the
 * others on their port and Postgres.
 */
function checkJobRunningInference(ms: Manifest[], existingSecret = false) {
  const d = ofKind(ms, 'Deployment').find((x) => componentOf(x) === 'inference')!;
  const spec = d.spec as { replicas?: number; strategy: Obj };
  expect(spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } });
  const hpa = ofKind(ms, 'HorizontalPodAutoscaler').find((h) => componentOf(h) === 'inference');
  const fewest = hpa ? (hpa.spec as { minReplicas: number }).minReplicas : spec.replicas;
  expect(fewest).toBeGreaterThanOrEqual(2);
  if (hpa) expect(spec).not.toHaveProperty('replicas');
  const pod = podOf(d).spec as PodSpec & { terminationGracePeriodSeconds: number };
  const [c] = pod.containers as (Container & { lifecycle?: Obj })[];
  // The preStop pause stays; the grace covers it, the drain and the handover, and is longer than the others'.
  expect(c.lifecycle).toEqual({ preStop: { sleep: { seconds: 5 } } });
  expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(30);
  expect(pod.terminationGracePeriodSeconds).toBeLessThanOrEqual(60);
  const tasks = podOf(ofKind(ms, 'Deployment').find((x) => componentOf(x) === 'tasks')!).spec as PodSpec & {
    terminationGracePeriodSeconds: number;
  };
  expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(tasks.terminationGracePeriodSeconds);
  // Its address for the other pods: the pod IP from the downward API, on the port it listens on.
  const env = c.env ?? [];
  const podIp = env.findIndex((e) => e.name === 'POD_IP');
  expect(env[podIp]?.valueFrom).toEqual({ fieldRef: { fieldPath: 'status.podIP' } });
  const replicaUrl = env.findIndex((e) => e.name === 'INFERENCE_REPLICA_URL');
  expect(env[replicaUrl]?.value).toBe('http://$(POD_IP):8105');
  expect(podIp).toBeLessThan(replicaUrl); // $(POD_IP) expands only a variable defined before it
  const resolved = environmentOf(ms, d);
  expect(resolved.INFERENCE_REPLICA_URL).toBe(
    `http://${POD_IP}:${c.ports?.find((p) => p.name === 'http')?.containerPort}`,
  );
  // Its jobs in the shared store, through its own login (INFERENCE_DATABASE_URL).
  expect(resolved.INFERENCE_JOB_STORE).toBeUndefined(); // the default: database
  const db = secretFilesOf(ms, pod, c).find((f) => f.setting === 'DATABASE_URL');
  expect(db?.key).toBe('INFERENCE_DATABASE_URL');
  if (!existingSecret) {
    expect(new URL(db!.value!).username).toBe('vision_inference');
    expect(loadWithSecretFiles(ms, d)).toMatchObject({
      INFERENCE_JOB_STORE: 'database',
      INFERENCE_REPLICA_URL: `http://${POD_IP}:8105`,
    });
  }
  // One pod at a time may be evicted.
  const labels = podOf(d).metadata.labels;
  const pdbs = ofKind(ms, 'PodDisruptionBudget').filter((p) =>
    matches((p.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels, labels),
  );
  expect(pdbs).toHaveLength(1);
  const budget = pdbs[0].spec as { maxUnavailable?: number; minAvailable?: number };
  if (budget.minAvailable !== undefined) expect(budget.minAvailable).toBeLessThan(fewest!);
  else expect(budget.maxUnavailable).toBe(1);
  // Ingress: from its own pods, on its port (besides its callers); egress: the release's pods and Postgres.
  const own = ofKind(ms, 'NetworkPolicy')
    .map((np) => np.spec as unknown as PolicySpec)
    .filter((np) => matches(np.podSelector.matchLabels, labels) && np.policyTypes.includes('Ingress'))
    .flatMap((np) => np.ingress ?? [])
    .filter((rule) =>
      (rule.from ?? []).some((peer) => peer.podSelector && selects(peer.podSelector, labels)),
    );
  expect(own).toEqual([
    {
      from: [
        {
          podSelector: {
            matchLabels: expect.objectContaining({ 'app.kubernetes.io/component': 'inference' }),
          },
        },
      ],
      ports: [{ port: 'http', protocol: 'TCP' }],
    },
  ]);
  const { rules } = streamRulesOf(ms, 'inference');
  expect(rules).toContainEqual(RELEASE_RULE);
  expect(rules.some((r) => r.ports?.some((p) => p.port === 5432))).toBe(true);
}

/** Metric families documented in docs/OPERATIONS.md (the table under "Metrics"). */
function documentedMetrics(): Set<string> {
  const doc = readFileSync(path.join(repoRoot, 'docs/OPERATIONS.md'), 'utf8');
  return new Set([...doc.matchAll(/^\| `(vision_[a-z_]+)` \|/gm)].map((m) => m[1]));
}

function checkMetricsEndpoints(ms: Manifest[]) {
  const [sm] = ofKind(ms, 'ServiceMonitor');
  const spec = sm.spec as { endpoints: { port: string; path: string }[] };
  expect(spec.endpoints.map((e) => [e.port, e.path])).toEqual([['metrics', '/metrics']]);
  const [cm] = ofKind(ms, 'ConfigMap').filter((c) => c.data?.METRICS_PORT);
  const metricsPort = Number(cm.data?.METRICS_PORT);
  expect(metricsPort).toBe(9464);
  const deployments = ofKind(ms, 'Deployment');
  for (const s of ofKind(ms, 'Service')) {
    const port = (s.spec as { ports: { name: string; targetPort: string | number }[] }).ports.find(
      (p) => p.name === 'metrics',
    );
    expect(port?.targetPort).toBe('metrics');
    const d = deployments.find((x) => x.metadata.name === s.metadata.name) as Manifest;
    const c = podOf(d).spec.containers[0];
    // The container's metrics port is the one the process listens on (METRICS_PORT from the ConfigMap).
    expect(c.ports?.find((p) => p.name === 'metrics')?.containerPort).toBe(metricsPort);
    expect(c.envFrom?.map((e) => e.configMapRef?.name)).toContain(cm.metadata.name);
  }
}

function checkPrometheusRule(ms: Manifest[], runbookBase: string) {
  const [rule] = ofKind(ms, 'PrometheusRule');
  expect(rule.metadata.labels?.release).toBe('kube-prometheus-stack');
  const groups = (rule.spec as { groups: { rules: { alert: string; expr: string; annotations: Obj }[] }[] })
    .groups;
  const alerts = groups.flatMap((g) => g.rules);
  expect(alerts.map((a) => a.alert).sort()).toEqual(
    [
      'VisionBreakerOpen',
      'VisionConsumerLag',
      'VisionFramesDropped',
      'VisionHighErrorRate',
      'VisionShedding',
      'VisionRefundSpike',
      'VisionTasksStuckResolving',
      'VisionUpstreamTimeouts',
      'VisionWebhookBacklogGrowing',
    ].sort(),
  );
  const doc = readFileSync(path.join(repoRoot, 'docs/OPERATIONS.md'), 'utf8');
  const documented = documentedMetrics();
  for (const a of alerts) {
    expect(a.annotations.runbook_url).toBe(`${runbookBase}#${a.alert.toLowerCase()}`);
    expect(doc).toContain(`#### ${a.alert}\n`);
    for (const m of a.expr.match(/vision_[a-z_]+/g) ?? [])
      expect([a.alert, documented.has(m.replace(/_(bucket|count|sum)$/, ''))]).toEqual([a.alert, true]);
  }
}

function checkDashboard(ms: Manifest[], folder: string) {
  const [cm] = ofKind(ms, 'ConfigMap').filter((c) => c.metadata.labels?.grafana_dashboard === '1');
  expect(cm.metadata.annotations?.grafana_folder).toBe(folder);
  const dash = JSON.parse(cm.data?.['vision.json'] ?? '') as {
    uid: string;
    panels: { type: string; targets?: { expr: string }[] }[];
  };
  expect(dash.uid).toBe('vision-overview');
  const exprs = dash.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  expect(exprs.length).toBeGreaterThan(15);
  const documented = documentedMetrics();
  const used = new Set(
    exprs.flatMap((e) => e.match(/vision_[a-z_]+/g) ?? []).map((m) => m.replace(/_(bucket|count|sum)$/, '')),
  );
  for (const m of used) expect([m, documented.has(m)]).toEqual([m, true]);
  // Every documented family is on the dashboard.
  for (const m of documented) expect([m, used.has(m)]).toEqual([m, true]);
}

function checkServices(ms: Manifest[]) {
  const deployments = ofKind(ms, 'Deployment');
  for (const s of ofKind(ms, 'Service')) {
    const spec = s.spec as {
      selector: Record<string, string>;
      ports: { port: number; targetPort: string | number }[];
    };
    const selected = deployments.filter((d) => matches(spec.selector, podOf(d).metadata.labels));
    expect({ service: s.metadata.name, selected: selected.map((d) => d.metadata.name) }).toEqual({
      service: s.metadata.name,
      selected: [s.metadata.name],
    });
    const names = selected[0].spec && podOf(selected[0]).spec.containers[0].ports?.map((p) => p.name);
    for (const p of spec.ports) expect(names).toContain(p.targetPort);
    // Deployment selector selects its own pods.
    const dsel = (selected[0].spec as { selector: { matchLabels: Record<string, string> } }).selector
      .matchLabels;
    expect(matches(dsel, podOf(selected[0]).metadata.labels)).toBe(true);
  }
}

interface Peer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}
interface PolicySpec {
  podSelector: { matchLabels?: Record<string, string> };
  policyTypes: string[];
  ingress?: { from?: Peer[]; ports?: unknown[] }[];
}

/** A pod that might send traffic: its namespace's labels and its own labels. */
interface Sender {
  namespace: Record<string, string>;
  labels: Record<string, string>;
  /** Its address, for ipBlock peers (a proxy on a node's own network). */
  ip?: string;
}
const RELEASE_NS = { 'kubernetes.io/metadata.name': 'vision' };

/** NetworkPolicy semantics (ingress): is `sender` admitted to pods with `labels`? Unselected pods admit all. */
function admits(ms: Manifest[], labels: Record<string, string>, sender: Sender): boolean {
  const policies = ofKind(ms, 'NetworkPolicy')
    .map((np) => np.spec as unknown as PolicySpec)
    .filter((spec) => matches(spec.podSelector.matchLabels, labels) && spec.policyTypes.includes('Ingress'));
  if (policies.length === 0) return true;
  return policies.some((spec) =>
    (spec.ingress ?? []).some(
      (rule) =>
        !rule.from ||
        rule.from.length === 0 ||
        rule.from.some((peer) => {
          if (peer.ipBlock) {
            const { cidr, except = [] } = peer.ipBlock;
            return (
              sender.ip !== undefined && inCidr(sender.ip, cidr) && !except.some((e) => inCidr(sender.ip!, e))
            );
          }
          const nsOk = peer.namespaceSelector
            ? selects(peer.namespaceSelector, sender.namespace)
            : matches(RELEASE_NS, sender.namespace);
          const podOk = peer.podSelector ? selects(peer.podSelector, sender.labels) : true;
          return nsOk && podOk;
        }),
    ),
  );
}

/** IPv4 dotted quad → 32-bit number. */
const ipv4 = (ip: string) => ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
const inCidr = (ip: string, cidr: string) => {
  const [base, bits] = cidr.split('/');
  if (base.includes(':') || ip.includes(':')) return false; // IPv4 only here
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipv4(ip) / size) === Math.floor(ipv4(base) / size);
};
interface EgressPeer {
  ipBlock?: { cidr: string; except?: string[] };
  podSelector?: { matchLabels?: Record<string, string> };
  namespaceSelector?: { matchLabels?: Record<string, string> };
}
interface EgressSpec {
  podSelector: { matchLabels?: Record<string, string> };
  policyTypes: string[];
  egress?: { to?: EgressPeer[]; ports?: { port: number; protocol: string }[] }[];
}
/** Egress policies that select pods with `labels`. */
const egressOf = (ms: Manifest[], labels: Record<string, string>) =>
  ofKind(ms, 'NetworkPolicy')
    .map((np) => np.spec as unknown as EgressSpec)
    .filter((spec) => matches(spec.podSelector.matchLabels, labels) && spec.policyTypes.includes('Egress'));
/**
 * NetworkPolicy semantics (egress to an address outside the cluster): may pods with `labels` connect to `ip`, on
 * TCP `port` when given (without a port: on every port, so only rules without ports count)?
 */
function egressAllowsIp(ms: Manifest[], labels: Record<string, string>, ip: string, port?: number): boolean {
  const policies = egressOf(ms, labels);
  if (policies.length === 0) return true;
  return policies.some((spec) =>
    (spec.egress ?? []).some(
      (rule) =>
        (!rule.ports ||
          (port !== undefined && rule.ports.some((p) => p.port === port && p.protocol === 'TCP'))) &&
        (rule.to ?? []).some(
          (peer) =>
            peer.ipBlock !== undefined &&
            inCidr(ip, peer.ipBlock.cidr) &&
            !(peer.ipBlock.except ?? []).some((e) => inCidr(ip, e)),
        ),
    ),
  );
}

/** What the stream-opening pods may not reach inside 0.0.0.0/0 and ::/0, exactly. */
const STREAM_EXCEPT_V4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '224.0.0.0/4',
  '240.0.0.0/4',
];
const STREAM_EXCEPT_V6 = [
  '::/128',
  '::1/128',
  '64:ff9b::/96',
  '64:ff9b:1::/48',
  '2001::/32',
  '2002::/16',
  'fc00::/7',
  'fe80::/10',
  'ff00::/8',
];
const PUBLIC_RULE = {
  to: [
    { ipBlock: { cidr: '0.0.0.0/0', except: STREAM_EXCEPT_V4 } },
    { ipBlock: { cidr: '::/0', except: STREAM_EXCEPT_V6 } },
  ],
};
const DNS_RULE = {
  to: [{ namespaceSelector: {} }],
  ports: [
    { port: 53, protocol: 'UDP' },
    { port: 53, protocol: 'TCP' },
  ],
};
const RELEASE_RULE = {
  to: [
    {
      podSelector: {
        matchLabels: { 'app.kubernetes.io/name': 'vision', 'app.kubernetes.io/instance': 'vis' },
      },
    },
  ],
};
/** The chart's components, each a Deployment of its own. */
const EVERY_COMPONENT = ['gateway', 'images', 'inference', 'inference-detect', 'quota', 'results', 'tasks'];
/** The components whose pods an egress policy selects. */
const egressLimited = (ms: Manifest[]) =>
  ofKind(ms, 'Deployment')
    .filter((d) => egressOf(ms, podOf(d).metadata.labels).length > 0)
    .map((d) => componentOf(podOf(d)))
    .sort();
/** The egress rules of the one stream-egress policy of a component's pods. */
function streamRulesOf(ms: Manifest[], component: string) {
  const d = ofKind(ms, 'Deployment').find((m) => componentOf(podOf(m)) === component)!;
  const policies = egressOf(ms, podOf(d).metadata.labels);
  expect(policies).toHaveLength(1);
  return { labels: podOf(d).metadata.labels, rules: policies[0].egress ?? [] };
}
/** A backend's rule: its peers on its one TCP port. */
const backendRule = (to: unknown[], port: number) => ({ to, ports: [{ port, protocol: 'TCP' }] });
const NAMESPACE_PODS = [{ podSelector: {} }];

/**
 * Where the Gateway's proxies (or an ingress controller) run, as networkPolicy.gatewayFrom says: pods it must admit
 * to the gateway, and look-alikes it must not.
 */
interface Proxies {
  admitted: Sender[];
  strangers: Sender[];
}
const ns = (name: string) => ({ 'kubernetes.io/metadata.name': name });
const GATEWAY_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';

function checkNetworkPolicies(ms: Manifest[], proxies: Proxies) {
  const deployments = ofKind(ms, 'Deployment');
  const strangers: Sender[] = [
    { namespace: RELEASE_NS, labels: { app: 'debug-shell' } }, // another pod of the namespace
    { namespace: ns('other'), labels: {} },
    // The retired ingress-nginx's pods are nobody in particular now.
    { namespace: ns('ingress-nginx'), labels: { 'app.kubernetes.io/name': 'ingress-nginx' } },
    ...proxies.strangers,
  ];
  for (const d of deployments) {
    const target = podOf(d).metadata.labels;
    const service = serviceOf(podOf(d).spec.containers[0]);
    const where = `${d.metadata.name}`;
    // Only the gateway admits the proxies.
    for (const proxy of proxies.admitted)
      expect({ where, proxy, admitted: admits(ms, target, proxy) }).toEqual({
        where,
        proxy,
        admitted: service === 'gateway',
      });
    for (const s of strangers)
      expect({ where, stranger: s, admitted: admits(ms, target, s) }).toEqual({
        where,
        stranger: s,
        admitted: false,
      });
    // Pods of the release: exactly the documented callers.
    for (const from of deployments) {
      const caller = serviceOf(podOf(from).spec.containers[0]);
      // The job-running inference pods also take the calls of a job that reached another of them.
      const peer = componentOf(from) === 'inference' && componentOf(d) === 'inference';
      const expected = peer || (service !== 'gateway' && CALLERS[service].includes(caller));
      const got = admits(ms, target, { namespace: RELEASE_NS, labels: podOf(from).metadata.labels });
      if (!expected || peer)
        expect({ where, from: from.metadata.name, admitted: got }).toEqual({
          where,
          from: from.metadata.name,
          admitted: expected,
        });
    }
  }
  // The calls the services make are all allowed.
  const podLabels = (component: string) =>
    podOf(deployments.find((d) => componentOf(d) === component)!).metadata.labels;
  const reach = (from: string, to: string) =>
    admits(ms, podLabels(to), { namespace: RELEASE_NS, labels: podLabels(from) });
  for (const to of ['tasks', 'quota', 'results', 'images']) expect(reach('gateway', to)).toBe(true);
  expect(reach('tasks', 'quota')).toBe(true);
  expect(reach('tasks', 'inference')).toBe(true);
  expect(reach('results', 'inference')).toBe(true);
  expect(reach('inference', 'inference')).toBe(true);
  expect(reach('images', 'quota')).toBe(true);
  expect(reach('tasks', 'images')).toBe(true);
  expect(reach('results', 'tasks')).toBe(true);
  const detect = deployments.some((d) => componentOf(d) === 'inference-detect');
  expect(reach('images', detect ? 'inference-detect' : 'inference')).toBe(true);
}

/** The default gatewayFrom: pods labelled with a Gateway's name (GEP-1762), in any namespace. */
const GEP_1762_PROXIES: Proxies = {
  admitted: [
    { namespace: ns('envoy-gateway-system'), labels: { [GATEWAY_NAME_LABEL]: 'shared' } },
    { namespace: RELEASE_NS, labels: { [GATEWAY_NAME_LABEL]: 'vis-vision', app: 'proxy' } },
  ],
  strangers: [{ namespace: ns('envoy-gateway-system'), labels: { 'app.kubernetes.io/name': 'envoy' } }],
};
/** production-values.yaml: the proxies of the Gateway "shared" in gateway-system. */
const SHARED_GATEWAY_PROXIES: Proxies = {
  admitted: [{ namespace: ns('gateway-system'), labels: { [GATEWAY_NAME_LABEL]: 'shared' } }],
  strangers: [
    { namespace: ns('gateway-system'), labels: { [GATEWAY_NAME_LABEL]: 'other' } },
    { namespace: ns('other'), labels: { [GATEWAY_NAME_LABEL]: 'shared' } },
  ],
};
/** ingress-tls-values.yaml: Traefik's pods in the namespace traefik. */
const TRAEFIK_PODS: Proxies = {
  admitted: [{ namespace: ns('traefik'), labels: { 'app.kubernetes.io/name': 'traefik' } }],
  strangers: [
    { namespace: ns('other'), labels: { 'app.kubernetes.io/name': 'traefik' } },
    { namespace: ns('traefik'), labels: { 'app.kubernetes.io/name': 'whoami' } },
    { namespace: ns('traefik'), labels: { [GATEWAY_NAME_LABEL]: 'shared' } },
  ],
};

beforeAll(() => {
  ensureHelm();
});

/** Each of `bads` as the string value `key` stops the render, saying a prefix's rule and `why`. */
function expectRefused(key: string, bads: string[], why: string): void {
  for (const bad of bads) {
    const r = runHelm(['template', 'vis', chartDir, ...TEST_CLUSTER, '--set-string', `${key}=${bad}`]);
    expect({ bad, status: r.status === 0 }).toEqual({ bad, status: false });
    expect(r.stderr).toContain(`at most 100 of A-Z a-z 0-9 . _ - ${why}`);
  }
}

describe('helm lint --strict', () => {
  test.each([
    ['default values', TEST_CLUSTER],
    ['production-like values', ['-f', productionValues]],
  ])('%s', (_name, extra) => {
    const r = runHelm(['lint', '--strict', chartDir, ...(extra as string[])]);
    expect({ status: r.status, out: r.stdout + r.stderr }).toEqual({
      status: 0,
      out: expect.stringContaining('0 chart(s) failed'),
    });
  });
});

describe('rendered with the default values', () => {
  let ms: Manifest[];
  beforeAll(() => {
    ms = render();
  });
  test('Deployments: probes, resources, restrictive securityContext', () => checkDeployments(ms));
  test('every service gets every variable it requires, valid for its schema', () =>
    checkEnvironment(ms, false));
  test('Service selectors match exactly their Deployment pods', () => checkServices(ms));
  test("the gateway keeps an idle client connection longer than the proxies in front keep theirs (Traefik's 90 s)", () => {
    const gateway = ofKind(ms, 'Deployment').find((d) => componentOf(d) === 'gateway');
    if (!gateway) throw new Error('no gateway Deployment rendered');
    expect(Number(environmentOf(ms, gateway).GATEWAY_KEEPALIVE_MS)).toBeGreaterThan(90_000);
  });
  test("NetworkPolicies: only the gateway is reachable from the Gateway's proxies (GEP-1762 label); internal services only from their callers", () =>
    checkNetworkPolicies(ms, GEP_1762_PROXIES));
  test("egress is limited for every component's pods, one policy each", () => {
    expect(egressLimited(ms)).toEqual(EVERY_COMPONENT);
    expect(
      ofKind(ms, 'NetworkPolicy')
        .filter((np) => (np.spec as unknown as EgressSpec).policyTypes.includes('Egress'))
        .map((np) => np.metadata.name)
        .sort(),
    ).toEqual([
      'vis-vision-gateway-egress',
      'vis-vision-images-egress',
      'vis-vision-inference-detect-egress',
      'vis-vision-inference-stream-egress',
      'vis-vision-quota-egress',
      'vis-vision-results-egress',
      'vis-vision-tasks-stream-egress',
    ]);
  });
  test("the gateway's egress: DNS, the release, Postgres, Redis and the collector; never Kafka, S3 or the internet", () => {
    const got = streamRulesOf(ms, 'gateway');
    expect(got.rules).toEqual([
      DNS_RULE,
      RELEASE_RULE,
      backendRule(NAMESPACE_PODS, 4318),
      backendRule(NAMESPACE_PODS, 5432),
      backendRule(NAMESPACE_PODS, 6379),
    ]);
    expect(
      ['8.8.8.8', '93.184.216.34', '10.0.0.1'].map((ip) => egressAllowsIp(ms, got.labels, ip, 443)),
    ).toEqual([false, false, false]);
  });
  test('stream egress: DNS, the release, the backends in the namespace on their ports, public addresses minus exactly the private ranges', () => {
    // Tasks and inference read Postgres (inference: its shared video jobs), Kafka, S3 and export traces; the
    // release's pods include the other inference pods (a call for a job sent on to the pod that runs it).
    const rules = [
      DNS_RULE,
      RELEASE_RULE,
      backendRule(NAMESPACE_PODS, 9092),
      backendRule(NAMESPACE_PODS, 4318),
      backendRule(NAMESPACE_PODS, 5432),
      backendRule(NAMESPACE_PODS, 9000),
      PUBLIC_RULE,
    ];
    const expected = { tasks: rules, inference: rules };
    for (const [where, rules] of Object.entries(expected)) {
      const got = streamRulesOf(ms, where);
      expect({ where, rules: got.rules }).toEqual({ where, rules });
      const verdicts = Object.fromEntries(
        [
          '8.8.8.8',
          '93.184.216.34',
          '169.254.169.254',
          '10.0.0.1',
          '172.16.5.5',
          '192.168.1.1',
          '100.64.0.1',
          '127.0.0.1',
        ].map((ip) => [ip, egressAllowsIp(ms, got.labels, ip, 5432)]),
      );
      expect({ where, verdicts }).toEqual({
        where,
        verdicts: {
          '8.8.8.8': true,
          '93.184.216.34': true,
          '169.254.169.254': false,
          '10.0.0.1': false,
          '172.16.5.5': false,
          '192.168.1.1': false,
          '100.64.0.1': false,
          '127.0.0.1': false,
        },
      });
    }
  });
  test('HPAs for gateway, results, images and both inference Deployments, on CPU', () => {
    const hpas = ofKind(ms, 'HorizontalPodAutoscaler');
    expect(hpas.map(componentOf).sort()).toEqual([
      'gateway',
      'images',
      'inference',
      'inference-detect',
      'results',
    ]);
    for (const h of hpas) {
      const target = (h.spec as { scaleTargetRef: { kind: string; name: string } }).scaleTargetRef;
      const d = ofKind(ms, 'Deployment').find((x) => x.metadata.name === target.name);
      expect(d).toBeDefined();
      expect(d!.spec).not.toHaveProperty('replicas'); // the HPA owns the count
      expect((h.spec as { metrics: Obj[] }).metrics.map((m) => m.type)).toEqual(['Resource']);
    }
  });
  test('the job-running inference pods: at least two, rolled one at a time, with the time to hand their jobs over', () => {
    checkJobRunningInference(ms);
    const hpa = ofKind(ms, 'HorizontalPodAutoscaler').find((h) => componentOf(h) === 'inference')!;
    expect(hpa.spec).toMatchObject({
      minReplicas: 2,
      behavior: { scaleDown: { policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } },
    });
    // Without the HPA: two pods.
    const fixed = render('--set', 'services.inference.autoscaling.enabled=false');
    const d = ofKind(fixed, 'Deployment').find((x) => componentOf(x) === 'inference')!;
    expect((d.spec as { replicas: number }).replicas).toBe(2);
    expect(ofKind(fixed, 'HorizontalPodAutoscaler').map(componentOf)).not.toContain('inference');
    // Tasks' fallback count of the inference slots: INFERENCE_MAX_JOBS of the fewest pods there are.
    const slots = (m: Manifest[]) =>
      environmentOf(
        m,
        ofKind(m, 'Deployment').find((x) => componentOf(x) === 'tasks')!,
      ).TASKS_INFERENCE_SLOTS;
    expect(slots(ms)).toBe('8');
    expect(slots(render('--set', 'services.inference.autoscaling.minReplicas=3'))).toBe('12');
  });
  test('every Deployment hashes the one Secret the release renders (a first upgrade rolls no pod for nothing)', () => {
    const sums = ofKind(ms, 'Deployment').map(
      (d) => (podOf(d).metadata as { annotations?: Record<string, string> }).annotations?.['checksum/secret'],
    );
    expect(sums.length).toBeGreaterThan(5);
    expect(new Set(sums)).toEqual(new Set([expect.stringMatching(/^[0-9a-f]{64}$/)]));
  });
  test("an upgrade of the inference image alone: its own tag or digest rolls it, every other pod keeps the release's", () => {
    const imageOf = (m: Manifest[]) =>
      Object.fromEntries(
        ofKind(m, 'Deployment').map((d) => [componentOf(d), podOf(d).spec.containers[0].image]),
      );
    const base = imageOf(render('--set', 'image.tag=1.0.0'));
    expect(new Set(Object.values(base))).toEqual(new Set(['ghcr.io/vision/vision:1.0.0']));
    const tagged = imageOf(render('--set', 'image.tag=1.0.0', '--set', 'services.inference.image.tag=1.0.1'));
    expect(tagged).toEqual({ ...base, inference: 'ghcr.io/vision/vision:1.0.1' });
    const digest = `sha256:${'a'.repeat(64)}`;
    const pinned = imageOf(
      render('--set', 'image.tag=1.0.0', '--set', `services.inference.image.digest=${digest}`),
    );
    expect(pinned).toEqual({ ...base, inference: `ghcr.io/vision/vision@${digest}` });
    // Not an image reference: refused by the schema.
    expect(() => render('--set', 'services.inference.image.digest=latest')).toThrow(/digest/);
  });
  test('the detect pool keeps no video job: INFERENCE_JOB_STORE=memory, no database login, no peer address', () => {
    const d = ofKind(ms, 'Deployment').find((x) => componentOf(x) === 'inference-detect')!;
    const env = environmentOf(ms, d);
    expect(env.INFERENCE_JOB_STORE).toBe('memory');
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.INFERENCE_REPLICA_URL).toBeUndefined();
    expect(loadWithSecretFiles(ms, d)).toMatchObject({ INFERENCE_JOB_STORE: 'memory' });
  });
  test('a PodDisruptionBudget selects each Deployment', () => {
    for (const d of ofKind(ms, 'Deployment')) {
      const pdbs = ofKind(ms, 'PodDisruptionBudget').filter((p) =>
        matches(
          (p.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels,
          podOf(d).metadata.labels,
        ),
      );
      expect({ d: d.metadata.name, n: pdbs.length }).toEqual({ d: d.metadata.name, n: 1 });
    }
  });
  test('the migration Job is a pre-install/pre-upgrade hook running scripts/migrate.js, its Secret created before it', () => {
    const [job] = ofKind(ms, 'Job');
    expect(job.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    const pod = (job.spec as { template: { spec: PodSpec } }).template.spec;
    expect(pod.containers[0].command).toEqual(['node', 'scripts/migrate.js']);
    const [file, ...others] = secretFilesOf(ms, pod, pod.containers[0]);
    // The owner login only: no service's own login.
    expect(others).toEqual([]);
    expect(file).toMatchObject({ setting: 'DATABASE_URL', key: 'DATABASE_URL' });
    expect(new URL(file.value!).username).toBe('vision');
    // It grants each service's schema to that service's role.
    expect(pod.containers[0].env?.find((e) => e.name === 'DATABASE_SERVICE_ROLES')?.value).toBe(
      'gateway:vision_gateway,images:vision_images,inference:vision_inference,quota:vision_quota,results:vision_results,tasks:vision_tasks',
    );
    const hookSecret = ofKind(ms, 'Secret').find((s) => s.metadata.name === file.secretName);
    expect(hookSecret?.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(Number(hookSecret?.metadata.annotations?.['helm.sh/hook-weight'])).toBeLessThan(
      Number(job.metadata.annotations?.['helm.sh/hook-weight']),
    );
    // Before it, the bus container provisions the topics and the Kafka principals (tested below).
    expect(pod.initContainers?.map((c) => c.name)).toEqual(['bus']);
  });
  test('no PrometheusRule or dashboard unless enabled; the metrics port exists anyway', () => {
    expect(ofKind(ms, 'PrometheusRule')).toEqual([]);
    expect(ofKind(ms, 'ConfigMap').filter((c) => c.metadata.labels?.grafana_dashboard)).toEqual([]);
    for (const s of ofKind(ms, 'Service'))
      expect((s.spec as { ports: { name: string }[] }).ports.map((p) => p.name)).toContain('metrics');
  });
  test('secrets reach the pods as read-only files, each pod only the keys it reads; none as an environment value', () => {
    checkNoSecretEnv(ms);
    expect(secretKeysByComponent(ms)).toEqual({
      gateway: ['GATEWAY_DATABASE_URL', 'REDIS_URL'],
      tasks: [
        'KAFKA_TASKS_PASSWORD',
        'S3_ACCESS_KEY',
        'S3_SECRET_KEY',
        'TASKS_ADMIN_TOKEN',
        'TASKS_DATABASE_URL',
      ],
      quota: ['KAFKA_QUOTA_PASSWORD', 'QUOTA_DATABASE_URL'],
      results: ['KAFKA_RESULTS_PASSWORD', 'RESULTS_DATABASE_URL', 'S3_ACCESS_KEY', 'S3_SECRET_KEY'],
      images: ['IMAGES_DATABASE_URL', 'KAFKA_IMAGES_PASSWORD', 'S3_ACCESS_KEY', 'S3_SECRET_KEY'],
      // Video jobs on uploads stat the object and hand ffmpeg a presigned URL; the jobs are kept in the database.
      inference: ['INFERENCE_DATABASE_URL', 'KAFKA_INFERENCE_PASSWORD', 'S3_ACCESS_KEY', 'S3_SECRET_KEY'],
      'inference-detect': ['KAFKA_INFERENCE_PASSWORD', 'S3_ACCESS_KEY', 'S3_SECRET_KEY'],
    });
  });
  test("each service pod gets its own database login as DATABASE_URL, and no pod the owner's", () => {
    const logins: Record<string, string | undefined> = {};
    for (const d of ofKind(ms, 'Deployment')) {
      const pod = podOf(d).spec;
      const files = secretFilesOf(ms, pod, pod.containers[0]);
      expect(files.map((f) => f.key)).not.toContain('DATABASE_URL');
      const db = files.find((f) => f.setting === 'DATABASE_URL');
      logins[componentOf(d)!] = db && `${db.key} ${new URL(db.value!).username}`;
    }
    expect(logins).toEqual({
      gateway: 'GATEWAY_DATABASE_URL vision_gateway',
      tasks: 'TASKS_DATABASE_URL vision_tasks',
      quota: 'QUOTA_DATABASE_URL vision_quota',
      results: 'RESULTS_DATABASE_URL vision_results',
      images: 'IMAGES_DATABASE_URL vision_images',
      inference: 'INFERENCE_DATABASE_URL vision_inference',
      'inference-detect': undefined,
    });
    // The release's Secret holds no owner login; only the migration Job's hook Secret does.
    const secret = ofKind(ms, 'Secret').find((s) => s.metadata.name === 'vis-vision-secrets')!;
    expect(Object.keys(secret.data!)).not.toContain('DATABASE_URL');
  });
  test("no models volume: the image's default models in /models serve", () => {
    const inference = ofKind(ms, 'Deployment').filter(
      (d) => serviceOf(podOf(d).spec.containers[0]) === 'inference',
    );
    expect(inference).toHaveLength(2);
    for (const d of inference) {
      const pod = podOf(d).spec;
      expect(pod.volumes?.map((v) => v.name)).not.toContain('models');
      expect(pod.containers[0].volumeMounts?.map((m) => m.mountPath)).not.toContain('/models');
      expect(environmentOf(ms, d).VISION_MODELS_DIR).toBe('/models');
    }
  });
  test('no HTTPRoute, Gateway or Ingress unless enabled; no ServiceMonitor unless enabled', () => {
    for (const kind of ['HTTPRoute', 'Gateway', 'Ingress']) expect(ofKind(ms, kind)).toEqual([]);
    expect(ofKind(ms, 'ServiceMonitor')).toEqual([]);
  });
  test('generated secrets are long enough for the services', () => {
    const secret = ofKind(ms, 'Secret').find((s) => s.metadata.name === 'vis-vision-secrets')!;
    for (const key of ['TASKS_ADMIN_TOKEN'])
      expect(Buffer.from(secret.data![key], 'base64').toString('utf8').length).toBeGreaterThanOrEqual(16);
  });
  test("the chart's route table is IDENTITY_ROUTES as the code has it (it derives callers and key mounts from it)", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const file = require('../../scripts/identity-routes-file.js') as {
      render: (routes: typeof IDENTITY_ROUTES, issuers: typeof IDENTITY_ISSUERS) => string;
      FILE: string;
    };
    // After a change of the table: `npm run build && node scripts/identity-routes-file.js`.
    expect(readFileSync(file.FILE, 'utf8')).toBe(file.render(IDENTITY_ROUTES, IDENTITY_ISSUERS));
  });
  test("each pod mounts only its own identity key and its callers' public keys; the generated pairs sign and verify", () => {
    const secret = ofKind(ms, 'Secret').find((s) => s.metadata.name === 'vis-vision-identity')!;
    const root = mkdtempSync(path.join(os.tmpdir(), 'vision-chart-identity-'));
    try {
      for (const d of ofKind(ms, 'Deployment')) {
        const pod = podOf(d).spec;
        const service = serviceOf(pod.containers[0]);
        const mount = pod.containers[0].volumeMounts?.find((m) => m.name === 'identity');
        const env = pod.containers[0].env?.find((e) => e.name === 'VISION_IDENTITY_DIR');
        expect({ service, dir: env?.value }).toEqual({ service, dir: mount?.mountPath });
        const volume = pod.volumes?.find((v) => v.name === 'identity') as unknown as {
          secret: { secretName: string; items: { key: string; path: string }[] };
        };
        expect(volume.secret.secretName).toBe('vis-vision-identity');
        const files = volume.secret.items.map((i) => i.path).sort();
        // The callers come from the route table (IDENTITY_ROUTES). A split inference deployment: the job
        // pod is called by the issuers of the job routes, the detect pool by those of image detection.
        const split = ofKind(ms, 'Deployment').some((x) => componentOf(x) === 'inference-detect');
        const issuersOf = (prefix: string) => [
          ...new Set(
            IDENTITY_ROUTES.filter((r) => r.service === 'inference' && r.path.startsWith(prefix)).flatMap(
              (r) => r.issuers,
            ),
          ),
        ];
        const callers =
          componentOf(d) === 'inference-detect'
            ? issuersOf('/internal/v1/detect')
            : componentOf(d) === 'inference' && split
              ? issuersOf('/internal/v1/jobs')
              : service === 'gateway'
                ? []
                : CALLERS[service];
        const expected = [
          ...(IDENTITY_ISSUERS.includes(service) ? [`${service}.key`] : []),
          ...callers.map((c: string) => `${c}.pub`),
          // The job grants results checks are signed with tasks' key.
          ...(JOB_GRANT_READERS.includes(service) && !callers.includes('tasks') ? ['tasks.pub'] : []),
        ].sort();
        expect({ component: componentOf(d), files }).toEqual({ component: componentOf(d), files: expected });
        // The service loads exactly these files (the pub as the chart writes it: a certificate).
        const dir = path.join(root, String(componentOf(d)));
        mkdirSync(dir);
        for (const i of volume.secret.items)
          writeFileSync(path.join(dir, i.path), Buffer.from(secret.data![i.key], 'base64'));
        const loaded = loadServiceIdentity(dir, service);
        expect([...loaded.verifier.keys.keys()].sort()).toEqual([...callers].sort());
        for (const caller of callers) {
          const signer = {
            issuer: caller,
            key: createPrivateKey(Buffer.from(secret.data![`${caller}.key`], 'base64').toString('utf8')),
          };
          // A route of this service that the route table opens to this caller (IDENTITY_ROUTES).
          const route = IDENTITY_ROUTES.find(
            (r) => r.service === service && (r.issuers as readonly string[]).includes(caller),
          )!;
          const call = { method: route.method, target: route.path.replace(/:[a-z_]+/g, 'x') };
          const header = signIdentity(signer, { subject: 's', requestId: 'r' }, service, call);
          expect(verifyIdentity(loaded.verifier, header, service, call)).toMatchObject({
            subject: 's',
            issuer: caller,
          });
        }
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('rendered with the production-like values', () => {
  let ms: Manifest[];
  beforeAll(() => {
    ms = render('-f', productionValues);
  });
  test('every ipBlock except is a strict subset of its cidr, as the API server checks it', () => {
    // The API server parses an IPv4-mapped IPv6 address (::ffff:a.b.c.d) as IPv4, so such an except never lies inside an IPv6 cidr.
    const family = (addr: string) => (isIPv4(addr) || /^::ffff:[0-9a-f.:]*$/i.test(addr) ? 'ipv4' : 'ipv6');
    const blocks = ofKind(ms, 'NetworkPolicy').flatMap((np) =>
      ((np.spec as { egress?: { to?: EgressPeer[] }[] }).egress ?? []).flatMap((rule) =>
        (rule.to ?? []).flatMap((peer) => (peer.ipBlock ? [peer.ipBlock] : [])),
      ),
    );
    expect(blocks.length).toBeGreaterThan(0);
    for (const { cidr, except } of blocks) {
      const [base, bits] = cidr.split('/');
      const list = new BlockList();
      list.addSubnet(base, Number(bits), family(base));
      for (const e of except ?? []) {
        const [eBase, eBits] = e.split('/');
        const inside =
          family(eBase) === family(base) && Number(eBits) > Number(bits) && list.check(eBase, family(eBase));
        expect({ cidr, except: e, inside }).toEqual({ cidr, except: e, inside: true });
      }
    }
  });
  test('Deployments: probes, resources, restrictive securityContext', () => checkDeployments(ms));
  test('every service gets every variable it requires (secrets from the existing Secret)', () => {
    checkEnvironment(ms, true);
    expect(ofKind(ms, 'Secret')).toEqual([]); // nothing secret rendered: all from secrets.existingSecret
    checkNoSecretEnv(ms);
    for (const d of ofKind(ms, 'Deployment')) {
      const pod = podOf(d).spec;
      for (const f of secretFilesOf(ms, pod, pod.containers[0])) expect(f.secretName).toBe('vision-secrets');
    }
    expect(secretKeysByComponent(ms)).toMatchObject({
      gateway: ['GATEWAY_DATABASE_URL', 'REDIS_URL'],
      tasks: ['KAFKA_TASKS_PASSWORD', 'S3_ACCESS_KEY', 'S3_SECRET_KEY', 'TASKS_DATABASE_URL'],
      results: ['KAFKA_RESULTS_PASSWORD', 'RESULTS_DATABASE_URL', 'S3_ACCESS_KEY', 'S3_SECRET_KEY'],
    });
  });
  test('the optional keys listed as held by the existing Secret are mounted, to the pods that read them', () => {
    const withKeys = render(
      '-f',
      productionValues,
      '--set',
      'secrets.existingSecretOptionalKeys={VISION_API_KEYS,TASKS_ADMIN_TOKEN,RESULTS_WEBHOOK_SECRET_KEY}',
    );
    checkNoSecretEnv(withKeys);
    expect(secretKeysByComponent(withKeys)).toEqual({
      gateway: ['GATEWAY_DATABASE_URL', 'REDIS_URL', 'VISION_API_KEYS'],
      tasks: [
        'KAFKA_TASKS_PASSWORD',
        'S3_ACCESS_KEY',
        'S3_SECRET_KEY',
        'TASKS_ADMIN_TOKEN',
        'TASKS_DATABASE_URL',
      ],
      quota: ['KAFKA_QUOTA_PASSWORD', 'QUOTA_DATABASE_URL'],
      results: [
        'KAFKA_RESULTS_PASSWORD',
        'RESULTS_DATABASE_URL',
        'RESULTS_WEBHOOK_SECRET_KEY',
        'S3_ACCESS_KEY',
        'S3_SECRET_KEY',
      ],
      images: ['IMAGES_DATABASE_URL', 'KAFKA_IMAGES_PASSWORD', 'S3_ACCESS_KEY', 'S3_SECRET_KEY'],
      inference: ['INFERENCE_DATABASE_URL', 'KAFKA_INFERENCE_PASSWORD', 'S3_ACCESS_KEY', 'S3_SECRET_KEY'],
      'inference-detect': ['KAFKA_INFERENCE_PASSWORD', 'S3_ACCESS_KEY', 'S3_SECRET_KEY'],
    });
  });
  test('Service selectors match exactly their Deployment pods', () => checkServices(ms));
  test('the job-running inference pods: two to six, rolled one at a time, their jobs in the database', () => {
    checkJobRunningInference(ms, true);
    const hpa = ofKind(ms, 'HorizontalPodAutoscaler').find((h) => componentOf(h) === 'inference')!;
    expect(hpa.spec).toMatchObject({ minReplicas: 2, maxReplicas: 6 });
  });
  test('stream egress: tasks and the job-running inference pods reach DNS, the release, the backends named and public addresses only', () => {
    expect(egressLimited(ms)).toEqual(EVERY_COMPONENT);
    const inNamespace = (name: string) => [
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': name } } },
    ];
    // Postgres in 10.20.0.0/16, Kafka in the namespace data, the collector in observability; S3 is public.
    const postgres = backendRule([{ ipBlock: { cidr: '10.20.0.0/16' } }], 5432);
    const kafka = backendRule(inNamespace('data'), 9092);
    const otlp = backendRule(inNamespace('observability'), 4318);
    expect(streamRulesOf(ms, 'tasks').rules).toEqual([
      DNS_RULE,
      RELEASE_RULE,
      kafka,
      otlp,
      postgres,
      PUBLIC_RULE,
    ]);
    expect(streamRulesOf(ms, 'inference').rules).toEqual([
      DNS_RULE,
      RELEASE_RULE,
      kafka,
      otlp,
      postgres,
      PUBLIC_RULE,
    ]);
    const probes: [string, number][] = [
      ['8.8.8.8', 443],
      ['93.184.216.34', 554],
      ['10.20.3.4', 5432],
      ['10.20.3.4', 22],
      ['169.254.169.254', 80],
      ['10.0.0.1', 5432],
      ['192.168.1.1', 5432],
      ['172.16.5.5', 5432],
      ['127.0.0.1', 5432],
      ['100.64.0.1', 5432],
    ];
    for (const where of ['tasks', 'inference']) {
      const { labels } = streamRulesOf(ms, where);
      const verdicts = Object.fromEntries(
        probes.map(([ip, port]) => [`${ip}:${port}`, egressAllowsIp(ms, labels, ip, port)]),
      );
      expect({ where, verdicts }).toEqual({
        where,
        verdicts: {
          '8.8.8.8:443': true,
          '93.184.216.34:554': true,
          '10.20.3.4:5432': true, // backends.postgres: the managed database of the example
          '10.20.3.4:22': false,
          '169.254.169.254:80': false,
          '10.0.0.1:5432': false,
          '192.168.1.1:5432': false,
          '172.16.5.5:5432': false,
          '127.0.0.1:5432': false,
          '100.64.0.1:5432': false,
        },
      });
    }
  });
  test('NetworkPolicies isolate internal services; Prometheus pods of the monitoring namespace may scrape', () => {
    checkNetworkPolicies(ms, SHARED_GATEWAY_PROXIES);
    const prometheus: Sender = {
      namespace: { 'kubernetes.io/metadata.name': 'monitoring' },
      labels: { 'app.kubernetes.io/name': 'prometheus' },
    };
    for (const d of ofKind(ms, 'Deployment'))
      expect(admits(ms, podOf(d).metadata.labels, prometheus)).toBe(true);
  });
  test("an HTTPRoute to the gateway Service on the shared Gateway's HTTPS listener; no Ingress, no Gateway of its own", () => {
    expect(ofKind(ms, 'Ingress')).toEqual([]);
    expect(ofKind(ms, 'Gateway')).toEqual([]);
    const route = routeSpec(ms);
    expect(route.parentRefs).toEqual([{ name: 'shared', namespace: 'gateway-system', sectionName: 'https' }]);
    expect(route.hostnames).toEqual(['vision.example.com']);
  });
  test('ServiceMonitor selects the release Services', () => {
    const [sm] = ofKind(ms, 'ServiceMonitor');
    expect(sm.metadata.labels?.release).toBe('kube-prometheus-stack');
  });
  test('ServiceMonitor scrapes GET /metrics on the metrics port every Service and pod exposes (METRICS_PORT)', () =>
    checkMetricsEndpoints(ms));
  test('the images HPA also scales on calls in flight per pod when inFlightTarget is set', () => {
    const hpa = ofKind(ms, 'HorizontalPodAutoscaler').find((h) => componentOf(h) === 'images')!;
    const metrics = (hpa.spec as { metrics: Obj[] }).metrics;
    expect(metrics).toContainEqual({
      type: 'Pods',
      pods: {
        metric: { name: 'vision_admission_in_flight' },
        target: { type: 'AverageValue', averageValue: '3' },
      },
    });
    const gateway = ofKind(ms, 'HorizontalPodAutoscaler').find((h) => componentOf(h) === 'gateway')!;
    expect((gateway.spec as { metrics: Obj[] }).metrics.map((m) => m.type)).toEqual(['Resource']);
  });
  test('PrometheusRule: the alerts of files/prometheus-rules.yaml, each with a runbook in docs/OPERATIONS.md', () =>
    checkPrometheusRule(ms, 'https://docs.example.com/vision/OPERATIONS.md'));
  test('Grafana dashboard ConfigMap for the sidecar; its queries use only documented metrics', () =>
    checkDashboard(ms, 'Vision'));
  test('models come from the claim, read-only', () => {
    for (const d of ofKind(ms, 'Deployment').filter(
      (x) => serviceOf(podOf(x).spec.containers[0]) === 'inference',
    )) {
      const vol = podOf(d).spec.volumes?.find((v) => v.name === 'models');
      expect(vol).toEqual({
        name: 'models',
        persistentVolumeClaim: { claimName: 'vision-models', readOnly: true },
      });
    }
  });
});

test('a models volume from values is mounted read-only at /models over the image copies', () => {
  const ms = render(
    '--set',
    'models.volume.nfs.server=nfs.example.com',
    '--set',
    'models.volume.nfs.path=/vision',
  );
  checkEnvironment(ms, false);
  for (const d of ofKind(ms, 'Deployment').filter(
    (x) => serviceOf(podOf(x).spec.containers[0]) === 'inference',
  )) {
    const pod = podOf(d).spec;
    expect(pod.volumes?.find((v) => v.name === 'models')).toEqual({
      name: 'models',
      nfs: { server: 'nfs.example.com', path: '/vision' },
    });
    expect(pod.containers[0].volumeMounts?.find((m) => m.name === 'models')).toEqual({
      name: 'models',
      mountPath: '/models',
      readOnly: true,
    });
  }
});

interface RouteSpec {
  parentRefs: Obj[];
  hostnames?: string[];
  rules: { matches: unknown[]; backendRefs: Obj[]; timeouts?: Obj }[];
}
interface GatewaySpec {
  gatewayClassName: string;
  listeners: Obj[];
}
interface PolicyRule {
  from?: Obj[];
  ports?: Obj[];
}

/** The one HTTPRoute: every path to exactly the gateway Service's http port. */
function routeSpec(ms: Manifest[]): RouteSpec {
  const routes = ofKind(ms, 'HTTPRoute');
  expect(routes.map((r) => [r.apiVersion, r.metadata.name, componentOf(r)])).toEqual([
    ['gateway.networking.k8s.io/v1', 'vis-vision-gateway', 'gateway'],
  ]);
  const spec = routes[0].spec as unknown as RouteSpec;
  const service = ofKind(ms, 'Service').find((s) => componentOf(s) === 'gateway')!;
  const ports = (service.spec as { ports: { name: string; port: number; targetPort: string }[] }).ports;
  const http = ports.find((p) => p.name === 'http')!;
  expect(http).toMatchObject({ port: 8080, targetPort: 'http' });
  expect(spec.rules).toHaveLength(1);
  expect(spec.rules[0].matches).toEqual([{ path: { type: 'PathPrefix', value: '/' } }]);
  expect(spec.rules[0].backendRefs).toEqual([{ name: service.metadata.name, port: http.port }]);
  return spec;
}

/** The ingress rules of the gateway pods' own NetworkPolicy. */
function gatewayRules(ms: Manifest[]): PolicyRule[] {
  const np = ofKind(ms, 'NetworkPolicy').find((m) => m.metadata.name === 'vis-vision-gateway')!;
  return (np.spec as { ingress?: PolicyRule[] | null }).ingress ?? [];
}

describe('the way in: the Gateway API route, the optional Gateway, the Ingress, and who reaches the gateway', () => {
  const shared = [
    '--set',
    'route.enabled=true',
    '--set',
    'route.parentRefs[0].name=shared',
    '--set',
    'route.parentRefs[0].namespace=gateway-system',
    '--set',
    'route.parentRefs[0].sectionName=https',
    '--set',
    'route.hostnames={vision.example.com,api.example.com}',
  ];
  const ownGateway = ['--set', 'route.enabled=true', '--set', 'route.gateway.create=true'];

  test('nothing of ingress-nginx anywhere: by default, with the route and the Ingress on, or with the production-like values', () => {
    for (const args of [[], [...shared, '--set', 'ingress.enabled=true'], ['-f', productionValues]])
      expect({ args, nginx: /nginx/i.test(JSON.stringify(render(...args))) }).toEqual({ args, nginx: false });
  });

  test('the route attaches to route.parentRefs for route.hostnames, with no request timeout ("0s"); no Gateway', () => {
    const ms = render(...shared);
    const spec = routeSpec(ms);
    expect(spec.parentRefs).toEqual([{ name: 'shared', namespace: 'gateway-system', sectionName: 'https' }]);
    expect(spec.hostnames).toEqual(['vision.example.com', 'api.example.com']);
    expect(spec.rules[0].timeouts).toEqual({ request: '0s' });
    expect(ofKind(ms, 'Gateway')).toEqual([]);
    // Without hostnames, the route answers every host name of its listeners.
    expect(routeSpec(render(...shared, '--set', 'route.hostnames=null')).hostnames).toBeUndefined();
  });

  test("route.timeouts: null leaves the implementation's default; a duration is passed on", () => {
    expect(routeSpec(render(...shared, '--set', 'route.timeouts=null')).rules[0].timeouts).toBeUndefined();
    expect(
      routeSpec(
        render(...shared, '--set', 'route.timeouts.request=2h', '--set', 'route.timeouts.backendRequest=90s'),
      ).rules[0].timeouts,
    ).toEqual({ request: '2h', backendRequest: '90s' });
  });

  test("the release's Gateway: HTTP on 80, HTTPS on 443 with the certificate Secret, or the port given; the route attaches to its listener", () => {
    const cases: [string[], Obj][] = [
      [[], { name: 'http', protocol: 'HTTP', port: 80 }],
      [
        [
          '--set',
          'route.gateway.tls.certificateSecret=vision-tls',
          '--set',
          'route.gateway.hostname=vision.example.com',
        ],
        {
          name: 'https',
          protocol: 'HTTPS',
          port: 443,
          hostname: 'vision.example.com',
          tls: { mode: 'Terminate', certificateRefs: [{ kind: 'Secret', name: 'vision-tls' }] },
        },
      ],
      [['--set', 'route.gateway.port=8000'], { name: 'http', protocol: 'HTTP', port: 8000 }],
    ];
    for (const [args, listener] of cases) {
      const ms = render(...ownGateway, '--set', 'route.gateway.className=traefik', ...args);
      const gateways = ofKind(ms, 'Gateway');
      expect(
        gateways.map((g) => [
          g.apiVersion,
          g.metadata.name,
          g.metadata.labels?.['app.kubernetes.io/instance'],
        ]),
      ).toEqual([['gateway.networking.k8s.io/v1', 'vis-vision', 'vis']]);
      expect(gateways[0].spec as unknown as GatewaySpec).toEqual({
        gatewayClassName: 'traefik',
        listeners: [{ ...listener, allowedRoutes: { namespaces: { from: 'Same' } } }],
      });
      expect(routeSpec(ms).parentRefs).toEqual([{ name: 'vis-vision', sectionName: listener.name }]);
    }
    // With parentRefs given, the route attaches to those only.
    const both = render(
      ...shared,
      '--set',
      'route.gateway.create=true',
      '--set',
      'route.gateway.className=eg',
    );
    expect(ofKind(both, 'Gateway')).toHaveLength(1);
    expect(routeSpec(both).parentRefs).toEqual([
      { name: 'shared', namespace: 'gateway-system', sectionName: 'https' },
    ]);
  });

  test('a route with no Gateway to attach to, or a Gateway without its class, stops the render naming the way out', () => {
    const r = runHelm(['template', 'vis', chartDir, ...TEST_CLUSTER, '--set', 'route.enabled=true']);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/route\.parentRefs.*route\.gateway\.create=true with route\.gateway\.className/);
    const noClass = runHelm(['template', 'vis', chartDir, ...TEST_CLUSTER, ...ownGateway]);
    expect(noClass.status).not.toBe(0);
    expect(noClass.stderr).toMatch(/className/);
  });

  test('the gateway pods admit exactly networkPolicy.gatewayFrom, on their http port; no other pod admits those peers', () => {
    const peers = [
      {
        namespaceSelector: { matchLabels: { team: 'edge' } },
        podSelector: { matchLabels: { app: 'proxy' } },
      },
      { ipBlock: { cidr: '10.0.0.0/24' } },
    ];
    const ms = render('--set-json', `networkPolicy.gatewayFrom=${JSON.stringify(peers)}`);
    // The gateway has no callers inside the release: its one rule is the public API's.
    expect(gatewayRules(ms)).toEqual([{ from: peers, ports: [{ port: 'http', protocol: 'TCP' }] }]);
    checkNetworkPolicies(ms, {
      admitted: [
        { namespace: { team: 'edge', ...ns('edge') }, labels: { app: 'proxy' } },
        { namespace: ns('kube-system'), labels: {}, ip: '10.0.0.7' }, // a proxy on a node's network
      ],
      strangers: [
        { namespace: ns('kube-system'), labels: {}, ip: '10.0.1.7' },
        { namespace: ns('edge'), labels: { app: 'proxy' } },
        { namespace: { team: 'edge' }, labels: { app: 'other' } },
        GEP_1762_PROXIES.admitted[0],
      ],
    });
    // The address range is in the gateway's policy alone.
    for (const np of ofKind(ms, 'NetworkPolicy'))
      if (np.metadata.name !== 'vis-vision-gateway')
        expect(JSON.stringify(np.spec)).not.toContain('10.0.0.0/24');
    // None: no pod outside the release reaches the gateway.
    const closed = render('--set', 'networkPolicy.gatewayFrom=null');
    expect(gatewayRules(closed)).toEqual([]);
    checkNetworkPolicies(closed, { admitted: [], strangers: GEP_1762_PROXIES.admitted });
  });

  test('networkPolicy.ingressController, which gatewayFrom replaced, stops the render naming gatewayFrom', () => {
    const r = runHelm([
      'template',
      'vis',
      chartDir,
      ...TEST_CLUSTER,
      '--set',
      'networkPolicy.ingressController.namespaceSelector.matchLabels.name=ingress-nginx',
    ]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/networkPolicy\.ingressController was replaced by networkPolicy\.gatewayFrom/);
  });

  test("the Ingress carries exactly the annotations of values, none of its own, to the gateway Service's http port", () => {
    const [plain] = ofKind(render('--set', 'ingress.enabled=true'), 'Ingress');
    expect(plain.metadata.annotations).toBeUndefined();
    const [ingress] = ofKind(
      render(
        '--set',
        'ingress.enabled=true',
        '--set',
        'ingress.className=traefik',
        '--set',
        'ingress.annotations.example\\.com/team=vision',
      ),
      'Ingress',
    );
    expect(ingress.metadata.annotations).toEqual({ 'example.com/team': 'vision' });
    expect(ingress.spec).toMatchObject({
      ingressClassName: 'traefik',
      rules: [
        {
          http: { paths: [{ backend: { service: { name: 'vis-vision-gateway', port: { name: 'http' } } } }] },
        },
      ],
    });
  });

  test('helm install prints where the route answers, and warns when nothing may reach the gateway', () => {
    const own = renderNotes(
      ...ownGateway,
      '--set',
      'route.gateway.className=traefik',
      '--set',
      'route.gateway.tls.certificateSecret=vision-tls',
      '--set',
      'route.hostnames={vision.example.com}',
    );
    expect(own).toContain("the release's Gateway vis-vision (class traefik; HTTPS listener on port 443)");
    expect(own).toContain('at https://vision.example.com/v1/vision/...');
    expect(own).toContain('kubectl -n vision get httproute vis-vision-gateway');
    const onShared = renderNotes(...shared, '--set', 'route.hostnames=null');
    expect(onShared).toContain('Gateway gateway-system/shared, listener https');
    expect(onShared).toContain(
      "kubectl -n gateway-system get gateway shared -o jsonpath='{.status.addresses[*].value}'",
    );
    expect(onShared).not.toContain('WARNING: networkPolicy.gatewayFrom');
    expect(renderNotes(...shared, '--set', 'networkPolicy.gatewayFrom=null')).toContain(
      'WARNING: networkPolicy.gatewayFrom is empty',
    );
    expect(renderNotes()).toContain('kubectl -n vision port-forward svc/vis-vision-gateway 8080:8080');
  });
});

test("the chart Secret's optional keys are mounted when given, to the pods that read them", () => {
  const ms = render(
    '--set',
    'secrets.apiKeys=k_0123456789abcdef:alice',
    '--set',
    'secrets.resultsCursorSecret=0123456789abcdef0',
    '--set',
    'secrets.resultsWebhookSecretKey=0123456789abcdef1',
    '--set',
    'secrets.tasksStreamUrlKey=0123456789abcdef2',
  );
  checkNoSecretEnv(ms);
  checkEnvironment(ms, false);
  expect(secretKeysByComponent(ms)).toMatchObject({
    gateway: ['GATEWAY_DATABASE_URL', 'REDIS_URL', 'VISION_API_KEYS'],
    results: [
      'KAFKA_RESULTS_PASSWORD',
      'RESULTS_CURSOR_SECRET',
      'RESULTS_DATABASE_URL',
      'RESULTS_WEBHOOK_SECRET_KEY',
      'S3_ACCESS_KEY',
      'S3_SECRET_KEY',
    ],
  });
  expect(secretKeysByComponent(ms).tasks).toContain('TASKS_STREAM_URL_KEY');
});

test('without the detect pool, images calls the job-running inference pods and may reach them', () => {
  const ms = render('--set', 'services.inferenceDetect.enabled=false');
  expect(ofKind(ms, 'Deployment').map(componentOf)).not.toContain('inference-detect');
  checkEnvironment(ms, false);
  checkNetworkPolicies(ms, GEP_1762_PROXIES);
  checkJobRunningInference(ms);
});

test('the HPA of the job-running inference pods also scales on the jobs running per pod when activeJobsTarget is set', () => {
  const ms = render('--set', 'services.inference.autoscaling.activeJobsTarget=3');
  const hpa = ofKind(ms, 'HorizontalPodAutoscaler').find((h) => componentOf(h) === 'inference')!;
  expect((hpa.spec as { metrics: Obj[] }).metrics).toEqual([
    { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
    {
      type: 'Pods',
      pods: {
        metric: { name: 'vision_inference_active_jobs' },
        target: { type: 'AverageValue', averageValue: '3' },
      },
    },
  ]);
  // The metric is one the service exports and docs/OPERATIONS.md documents.
  expect(documentedMetrics().has('vision_inference_active_jobs')).toBe(true);
});

test('an IPv6 cluster gives the job-running inference pods their address in brackets through replicaUrl', () => {
  const ms = render('--set', 'services.inference.replicaUrl=http://[$(POD_IP)]:8105');
  const d = ofKind(ms, 'Deployment').find((x) => componentOf(x) === 'inference')!;
  expect(podOf(d).spec.containers[0].env?.find((e) => e.name === 'INFERENCE_REPLICA_URL')?.value).toBe(
    'http://[$(POD_IP)]:8105',
  );
});

describe('stream egress (networkPolicy.streamEgress)', () => {
  const template = (...args: string[]) =>
    runHelm(['template', 'vis', chartDir, '--namespace', 'vision', ...TEST_CLUSTER, ...args]);
  test('turned off explicitly, no pod has an egress policy, the gateway included', () => {
    const ms = render('--set', 'networkPolicy.streamEgress.enabled=false');
    expect(egressLimited(ms)).toEqual([]);
    expect(ofKind(ms, 'NetworkPolicy').some((np) => np.metadata.name.endsWith('-stream-egress'))).toBe(false);
  });
  test('the backends values name each server once, used by both policies; an empty `to` drops a rule; extraEgress is added', () => {
    const ms = render(
      '--set',
      'networkPolicy.streamEgress.backends.postgres.to[0].ipBlock.cidr=10.20.0.0/16',
      '--set',
      'networkPolicy.streamEgress.backends.kafka.to[0].namespaceSelector.matchLabels.team=data',
      '--set',
      'networkPolicy.streamEgress.backends.kafka.ports[0].port=9094',
      '--set',
      'networkPolicy.streamEgress.backends.s3.to=null',
      '--set-json',
      'networkPolicy.streamEgress.backends.otlp.to=[]',
      '--set',
      'networkPolicy.streamEgress.extraEgress[0].to[0].ipBlock.cidr=10.50.0.0/16',
      '--set',
      'networkPolicy.streamEgress.extraEgress[0].ports[0].port=554',
    );
    const postgres = backendRule([{ ipBlock: { cidr: '10.20.0.0/16' } }], 5432);
    const kafka = { to: [{ namespaceSelector: { matchLabels: { team: 'data' } } }], ports: [{ port: 9094 }] };
    const camera = { to: [{ ipBlock: { cidr: '10.50.0.0/16' } }], ports: [{ port: 554 }] };
    expect(streamRulesOf(ms, 'tasks').rules).toEqual([
      DNS_RULE,
      RELEASE_RULE,
      kafka,
      postgres,
      PUBLIC_RULE,
      camera,
    ]);
    expect(streamRulesOf(ms, 'inference').rules).toEqual([
      DNS_RULE,
      RELEASE_RULE,
      kafka,
      postgres,
      PUBLIC_RULE,
      camera,
    ]);
    const tasks = streamRulesOf(ms, 'tasks').labels;
    expect(egressAllowsIp(ms, tasks, '10.20.7.7', 5432)).toBe(true);
    expect(egressAllowsIp(ms, tasks, '10.20.7.7', 6379)).toBe(false);
    // No rule is ever rendered with an empty `to` (which would allow every destination).
    for (const np of ofKind(ms, 'NetworkPolicy'))
      for (const rule of (np.spec as unknown as EgressSpec).egress ?? [])
        expect(rule.to?.length).toBeGreaterThan(0);
  });
  test('a private IPv4 literal of a backend that no rule allows stops the render, naming the value and the way out', () => {
    const r = template(
      '--set',
      'external.postgres.serviceUrls.tasks=postgres://vision_tasks:Xk2pRealOne@10.1.2.3:5432/vision',
      '--set',
      'external.kafka.brokers={10.1.2.4:9092,kafka:9092}',
      '--set',
      'external.s3.endpoint=http://192.168.1.9:9000',
    );
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(
      "networkPolicy.streamEgress is on, and no rule of it lets the release's pods reach these private addresses: " +
        'external.postgres.serviceUrls.tasks names 10.1.2.3 (add networkPolicy.streamEgress.backends.postgres.to: [{ipBlock: {cidr: 10.1.2.3/32}}], or a wider block); ' +
        'external.kafka.brokers names 10.1.2.4 (add networkPolicy.streamEgress.backends.kafka.to: [{ipBlock: {cidr: 10.1.2.4/32}}], or a wider block); ' +
        'external.s3.endpoint names 192.168.1.9 (add networkPolicy.streamEgress.backends.s3.to: [{ipBlock: {cidr: 192.168.1.9/32}}], or a wider block); ' +
        'or set networkPolicy.streamEgress.enabled=false',
    );
    // Allowed by backends or extraEgress (an except inside the block does not count), or the policy off.
    const covered = [
      '--set',
      'external.postgres.serviceUrls.tasks=postgres://vision_tasks:Xk2pRealOne@10.1.2.3:5432/vision',
      '--set',
      'networkPolicy.streamEgress.backends.postgres.to[0].ipBlock.cidr=10.1.0.0/16',
    ];
    expect(template(...covered).status).toBe(0);
    // extraEgress counts for the database logins of tasks and inference, the pods it is given to; an except inside
    // its block does not.
    const inference = [
      '--set',
      'external.postgres.serviceUrls.inference=postgres://vision_inference:Xk2pRealOne@10.2.0.5:5432/vision',
      '--set',
      'networkPolicy.streamEgress.extraEgress[0].to[0].ipBlock.cidr=10.0.0.0/8',
    ];
    expect(template(...inference).status).toBe(0);
    const excepted = template(
      ...inference,
      '--set',
      'networkPolicy.streamEgress.extraEgress[0].to[0].ipBlock.except[0]=10.2.0.5/32',
    );
    expect(excepted.status).not.toBe(0);
    expect(excepted.stderr).toContain('external.postgres.serviceUrls.inference names 10.2.0.5 (add');
    // Not for a server that other pods use too (the brokers, another service's login, Redis): they have no extraEgress.
    const others = template(
      ...inference,
      '--set',
      'external.kafka.brokers={10.1.2.4:9092}',
      '--set',
      'external.postgres.serviceUrls.quota=postgres://vision_quota:Xk2pRealOne@10.7.7.7:5432/vision',
      '--set',
      'external.redis.url=redis://10.8.8.8:6379',
    );
    expect(others.status).not.toBe(0);
    for (const named of [
      'external.postgres.serviceUrls.quota names 10.7.7.7 (add networkPolicy.streamEgress.backends.postgres.to',
      'external.redis.url names 10.8.8.8 (add networkPolicy.streamEgress.backends.redis.to',
      'external.kafka.brokers names 10.1.2.4 (add networkPolicy.streamEgress.backends.kafka.to',
    ])
      expect(others.stderr).toContain(named);
    expect(others.stderr).not.toContain('serviceUrls.inference');
    expect(
      template(
        '--set',
        'external.s3.endpoint=http://192.168.1.9:9000',
        '--set',
        'networkPolicy.streamEgress.enabled=false',
      ).status,
    ).toBe(0);
    // Public literals, host names and loopback (inside the pod) are not checked.
    expect(
      template(
        '--set',
        'external.s3.endpoint=https://8.8.8.8',
        '--set',
        'external.otlp.endpoint=http://127.0.0.1:4318',
        '--set',
        'external.kafka.brokers={kafka.data.svc:9092}',
      ).status,
    ).toBe(0);
  });
  test.each([
    ['the defaults (--set allowDefaultCredentials=true)', []],
    ['ci/gateway-tls-values.yaml', ['gateway-tls']],
    ['ci/ingress-tls-values.yaml', ['ingress-tls']],
    ['ci/autoscaling-values.yaml', ['autoscaling']],
    ['ci/existing-secrets-values.yaml', ['existing-secrets']],
    ['ci/production-values.yaml', ['production']],
  ])(
    'each values file the kube install test installs renders it (development credentials allowed): %s',
    (_name, files) => {
      const ms = render(
        ...(files as string[]).flatMap((f) => ['-f', path.join(chartDir, `ci/${f}-values.yaml`)]),
      );
      expect(egressLimited(ms)).toEqual(EVERY_COMPONENT);
      checkJobRunningInference(ms, ['existing-secrets', 'production'].includes((files as string[])[0]));
      const proxies: Record<string, Proxies> = {
        'ingress-tls': TRAEFIK_PODS,
        production: SHARED_GATEWAY_PROXIES,
      };
      checkNetworkPolicies(ms, proxies[(files as string[])[0]] ?? GEP_1762_PROXIES);
      // The Postgres rule names where each file's database lives (the walkthrough's in the namespace data).
      const postgres = streamRulesOf(ms, 'tasks').rules.find((r) => r.ports?.some((p) => p.port === 5432));
      const where: Record<string, unknown[]> = {
        'existing-secrets': [
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'data' } } },
        ],
        production: [{ ipBlock: { cidr: '10.20.0.0/16' } }],
      };
      expect(postgres?.to).toEqual(where[(files as string[])[0]] ?? NAMESPACE_PODS);
    },
  );
});

describe('values.schema.json rejects bad values', () => {
  const rejects = (...args: string[]) => {
    const r = runHelm(['template', 'vis', chartDir, ...args]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/values don't meet the specifications of the schema/);
    return r.stderr;
  };
  test('a missing required value', () => {
    expect(rejects('--set', 'image.repository=null')).toMatch(/repository/);
    expect(rejects('--set', 'external.kafka=null')).toMatch(/kafka/);
  });
  test('an empty required value', () => {
    expect(rejects('--set', 'external.kafka.brokers={}')).toMatch(/brokers/);
    // Without an existing Secret, the database URL must be given.
    expect(rejects('--set', 'external.postgres.url=')).toMatch(/postgres/);
  });
  test('a wrongly typed value', () => {
    expect(rejects('--set', 'services.gateway.replicas=two')).toMatch(/replicas/);
    expect(rejects('--set-string', 'networkPolicy.enabled=yes')).toMatch(/enabled/);
    expect(rejects('--set', 'external.kafka.brokers=kafka:9092')).toMatch(/brokers/);
  });
  test('a misspelt key and a too short secret', () => {
    expect(rejects('--set', 'services.gatway.replicas=2')).toMatch(/gatway/);
    expect(rejects('--set', 'secrets.tasksAdminToken=short')).toMatch(/tasksAdminToken/);
  });
  test('a misspelt or mistyped route, Gateway or NetworkPolicy peer', () => {
    expect(rejects('--set', 'route.parentRefs[0].nme=shared')).toMatch(/nme/);
    expect(rejects('--set', 'route.gateway.port=70000')).toMatch(/port/);
    expect(rejects('--set-string', 'route.timeouts.request=10')).toMatch(/request/);
    expect(rejects('--set', 'networkPolicy.gatewayFrom[0].podSelector.matchLabel.app=proxy')).toMatch(
      /matchLabel/,
    );
  });
  test('the same flags with good values pass (the rejections are about the values)', () => {
    for (const args of [
      ['--set', 'services.gateway.replicas=3'],
      ['--set', 'external.kafka.brokers={k1:9092,k2:9092}'],
      ['--set', 'secrets.tasksAdminToken=0123456789abcdef'],
      ['--set', 'secrets.existingSecret=mine', '--set', 'external.postgres.url='],
      [
        '--set',
        'route.parentRefs[0].name=shared',
        '--set',
        'route.gateway.port=8000',
        '--set',
        'route.timeouts.request=10s',
      ],
      ['--set', 'networkPolicy.gatewayFrom[0].podSelector.matchLabels.app=proxy'],
    ])
      expect(runHelm(['template', 'vis', chartDir, ...TEST_CLUSTER, ...args]).status).toBe(0);
  });
});

describe('the default development credentials', () => {
  const template = (...args: string[]) => runHelm(['template', 'vis', chartDir, ...args]);
  const REAL = [
    '--set',
    'external.postgres.url=postgres://vision:Xk2pRealOne@db:5432/vision',
    ...['gateway', 'tasks', 'quota', 'results', 'images', 'inference'].flatMap((s) => [
      '--set',
      `external.postgres.serviceUrls.${s}=postgres://vision_${s}:Xk2p${s}Real@db:5432/vision`,
    ]),
    '--set',
    'external.s3.secretKey=Qz8sRealTwo',
  ];
  test('are refused by default, each named, with the ways out', () => {
    const r = template();
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(
      "the chart's default development credentials are in use (external.postgres.url, " +
        'external.postgres.serviceUrls.gateway, external.postgres.serviceUrls.images, ' +
        'external.postgres.serviceUrls.inference, external.postgres.serviceUrls.quota, ' +
        'external.postgres.serviceUrls.results, external.postgres.serviceUrls.tasks, external.s3.secretKey): ' +
        'set your own, or use secrets.existingSecret; for a throwaway test cluster, set allowDefaultCredentials=true',
    );
    const oneLeft = template(...REAL.slice(0, -2));
    expect(oneLeft.status).not.toBe(0);
    expect(oneLeft.stderr).toContain('in use (external.s3.secretKey)');
    expect(template('--set', 'allowDefaultCredentials=false').status).not.toBe(0);
  });
  test('render when allowed explicitly, replaced by real ones, or not used (an existing Secret)', () => {
    const allowed = template(...TEST_CLUSTER);
    expect({ status: allowed.status, stderr: allowed.stderr }).toEqual({ status: 0, stderr: '' });
    expect(template(...REAL, ...KAFKA_ADMIN).status).toBe(0);
    expect(template('--set', 'secrets.existingSecret=mine', ...KAFKA_ADMIN).status).toBe(0);
    expect(template('-f', productionValues).status).toBe(0);
  });
});

describe('database logins', () => {
  const template = (...args: string[]) =>
    runHelm(['template', 'vis', chartDir, '--namespace', 'vision', ...TEST_CLUSTER, ...args]);
  test("a service URL with the owner's login, or another service's, stops the render", () => {
    const owner = template(
      '--set',
      'external.postgres.serviceUrls.images=postgres://vision:pw@postgres:5432/vision',
    );
    expect(owner.status).not.toBe(0);
    expect(owner.stderr).toContain(
      'external.postgres.serviceUrls.images logs in as the owner of external.postgres.url: each service needs a login of its own',
    );
    const other = template(
      '--set',
      'external.postgres.serviceUrls.images=postgres://vision_gateway:pw@postgres:5432/vision',
    );
    expect(other.status).not.toBe(0);
    expect(other.stderr).toContain(
      'external.postgres.serviceUrls.images logs in as "vision_gateway", but external.postgres.serviceRoles.images is "vision_images"',
    );
  });
  test('one role for two services stops the render, also with an existing Secret', () => {
    for (const extra of [[], ['--set', 'secrets.existingSecret=mine']]) {
      const r = template(...extra, '--set', 'external.postgres.serviceRoles.images=vision_gateway');
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain('external.postgres.serviceRoles: each service needs a login of its own');
    }
  });
  test('the existing Secret: each pod mounts its own <SERVICE>_DATABASE_URL key, the migration Job DATABASE_URL', () => {
    const ms = render(
      '--set',
      'secrets.existingSecret=mine',
      '--set',
      'external.postgres.serviceRoles.tasks=acme_tasks',
    );
    for (const d of ofKind(ms, 'Deployment')) {
      const pod = podOf(d).spec;
      const db = secretFilesOf(ms, pod, pod.containers[0]).filter((f) => f.setting === 'DATABASE_URL');
      const program = serviceOf(pod.containers[0]);
      expect(db.map((f) => `${f.secretName} ${f.key}`)).toEqual(
        componentOf(d) === 'inference-detect' ? [] : [`mine ${program.toUpperCase()}_DATABASE_URL`],
      );
    }
    const [job] = ofKind(ms, 'Job');
    const pod = (job.spec as { template: { spec: PodSpec } }).template.spec;
    expect(secretFilesOf(ms, pod, pod.containers[0]).map((f) => `${f.secretName} ${f.key}`)).toEqual([
      'mine DATABASE_URL',
    ]);
    expect(pod.containers[0].env?.find((e) => e.name === 'DATABASE_SERVICE_ROLES')?.value).toContain(
      'tasks:acme_tasks',
    );
  });
});

describe('bus principals (external.kafka.sasl)', () => {
  const template = (...args: string[]) =>
    runHelm(['template', 'vis', chartDir, '--namespace', 'vision', ...DEV_CREDENTIALS, ...args]);
  const secretNamesOf = (pod: PodSpec) =>
    (pod.volumes ?? []).flatMap((v) =>
      (v as SecretVolume).secret ? [(v as SecretVolume).secret!.secretName] : [],
    );
  const passwordKey = (service: string) => `KAFKA_${service.toUpperCase()}_PASSWORD`;
  const migrateJob = (ms: Manifest[]) =>
    (ofKind(ms, 'Job')[0].spec as { template: { spec: PodSpec } }).template.spec;
  /** Each component's Kafka user and the Secret key its password file comes from (undefined: none). */
  const principalsOf = (ms: Manifest[]) =>
    Object.fromEntries(
      ofKind(ms, 'Deployment').map((d) => {
        const pod = podOf(d).spec;
        const [c] = pod.containers;
        const user = c.env?.find((e) => e.name === 'KAFKA_SASL_USERNAME')?.value;
        const files = secretFilesOf(ms, pod, c);
        const kafkaKeys = files.filter((f) => /^KAFKA_/.test(f.key)).map((f) => `${f.setting} ${f.key}`);
        return [
          componentOf(d),
          user === undefined && kafkaKeys.length === 0 ? undefined : { user, kafkaKeys },
        ];
      }),
    );

  test("the file of bus services is BUS_SERVICES as the code has it (the chart derives each pod's principal from it)", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const file = require('../../scripts/bus-services-file.js') as {
      render: (grants: typeof BUS_GRANTS) => string;
      FILE: string;
    };
    // After a change of BUS_GRANTS: `npm run build && node scripts/bus-services-file.js`.
    expect(readFileSync(file.FILE, 'utf8')).toBe(file.render(BUS_GRANTS));
  });

  test('each bus service pod signs in as its own principal with its own password file; the gateway holds none', () => {
    const ms = render();
    const expected = Object.fromEntries(
      ofKind(ms, 'Deployment').map((d) => {
        const program = serviceOf(podOf(d).spec.containers[0]);
        return [
          componentOf(d),
          (BUS_SERVICES as readonly string[]).includes(program)
            ? {
                user: `vision.vis.vision-${program}`,
                kafkaKeys: [`KAFKA_SASL_PASSWORD ${passwordKey(program)}`],
              }
            : undefined,
        ];
      }),
    );
    expect(expected.gateway).toBeUndefined();
    expect(principalsOf(ms)).toEqual(expected);
    // The passwords the chart makes: one per service, each its own, long.
    const secret = ofKind(ms, 'Secret').find((s) => s.metadata.name === 'vis-vision-secrets')!;
    const passwords = BUS_SERVICES.map((s) => Buffer.from(secret.data![passwordKey(s)], 'base64').toString());
    expect(new Set(passwords).size).toBe(BUS_SERVICES.length);
    for (const p of passwords) expect(p.length).toBeGreaterThanOrEqual(32);
    // No service pod mounts the brokers' super user.
    for (const d of ofKind(ms, 'Deployment'))
      expect({ d: d.metadata.name, secrets: secretNamesOf(podOf(d).spec) }).toEqual({
        d: d.metadata.name,
        secrets: expect.not.arrayContaining([KAFKA_ADMIN_SECRET]),
      });
  });

  test("the migration Job provisions them with bus-principals.js as the brokers' super user, mounted by its bus container alone", () => {
    const ms = render();
    const pod = migrateJob(ms);
    const [bus] = pod.initContainers ?? [];
    expect(bus.command).toEqual(['node', 'scripts/bus-principals.js']);
    const env = Object.fromEntries((bus.env ?? []).map((e) => [e.name, e.value]));
    expect(env).toMatchObject({ KAFKA_BROKERS: 'kafka:9092', KAFKA_SASL_MECHANISM: 'scram-sha-512' });
    const files = Object.fromEntries(secretFilesOf(ms, pod, bus).map((f) => [f.setting, f]));
    // The super user: its Secret's username and password keys, no value of the chart.
    expect(files.KAFKA_SASL_USERNAME).toMatchObject({ secretName: KAFKA_ADMIN_SECRET, key: 'username' });
    expect(files.KAFKA_SASL_PASSWORD).toMatchObject({ secretName: KAFKA_ADMIN_SECRET, key: 'password' });
    // Each service's user as its Deployment has it, and the same password as the release's Secret gives its pods.
    const release = ofKind(ms, 'Secret').find((s) => s.metadata.name === 'vis-vision-secrets')!;
    const principals = principalsOf(ms);
    for (const s of BUS_SERVICES) {
      const upper = s.toUpperCase();
      expect(env[`KAFKA_${upper}_USERNAME`]).toBe(principals[s]?.user);
      const file = files[`KAFKA_${upper}_PASSWORD`];
      expect(file?.secretName).toBe('vis-vision-migrate');
      expect(file?.value).toBe(Buffer.from(release.data![passwordKey(s)], 'base64').toString());
    }
    expect(Object.keys(files).sort()).toEqual(
      ['KAFKA_SASL_PASSWORD', 'KAFKA_SASL_USERNAME', ...BUS_SERVICES.map(passwordKey)].sort(),
    );
    // The migrations container mounts neither the super user nor the services' passwords.
    const migrate = pod.containers[0];
    expect(secretFilesOf(ms, pod, migrate).map((f) => f.key)).toEqual(['DATABASE_URL']);
    expect(migrate.volumeMounts?.map((m) => m.name).sort()).toEqual(['secrets', 'tmp']);
  });

  test('the existing Secret holds the passwords: each pod mounts its own key, the Job all of them', () => {
    const ms = render(
      '--set',
      'secrets.existingSecret=mine',
      '--set',
      'external.kafka.sasl.usernamePrefix=acme-',
    );
    const principals = principalsOf(ms);
    expect(principals.gateway).toBeUndefined();
    expect(principals.tasks).toEqual({
      user: 'vision.vis.acme-tasks',
      kafkaKeys: ['KAFKA_SASL_PASSWORD KAFKA_TASKS_PASSWORD'],
    });
    expect(principals['inference-detect']).toEqual({
      user: 'vision.vis.acme-inference',
      kafkaKeys: ['KAFKA_SASL_PASSWORD KAFKA_INFERENCE_PASSWORD'],
    });
    const pod = migrateJob(ms);
    const [bus] = pod.initContainers ?? [];
    expect(
      secretFilesOf(ms, pod, bus)
        .map((f) => `${f.secretName} ${f.key}`)
        .sort(),
    ).toEqual(
      [
        ...BUS_SERVICES.map((s) => `mine ${passwordKey(s)}`),
        `${KAFKA_ADMIN_SECRET} password`,
        `${KAFKA_ADMIN_SECRET} username`,
      ].sort(),
    );
    expect(bus.env?.find((e) => e.name === 'KAFKA_RESULTS_USERNAME')?.value).toBe('vision.vis.acme-results');
  });

  test("without the brokers' super user the render stops, naming the way out; the explicit flag renders no principal", () => {
    const refused = template();
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain(
      "external.kafka.sasl.superUser.existingSecret is empty: the migration Job signs in as the brokers' super user",
    );
    expect(refused.stderr).toContain('set external.kafka.allowUnauthenticated=true');
    const both = template(...KAFKA_ADMIN, '--set', 'external.kafka.allowUnauthenticated=true');
    expect(both.status).not.toBe(0);
    expect(both.stderr).toContain(
      'external.kafka.allowUnauthenticated is true, yet external.kafka.sasl.superUser.existingSecret is set',
    );
    // Said explicitly: brokers without authentication. No principal, no Kafka password, the topics made as before.
    const r = template('--set', 'external.kafka.allowUnauthenticated=true');
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    const ms = parseAllDocuments(r.stdout)
      .map((d) => d.toJS() as Manifest | null)
      .filter((m): m is Manifest => m !== null);
    expect(Object.values(principalsOf(ms)).filter(Boolean)).toEqual([]);
    for (const s of ofKind(ms, 'Secret'))
      expect(Object.keys(s.data ?? {}).filter((k) => k.startsWith('KAFKA_'))).toEqual([]);
    const pod = migrateJob(ms);
    expect(pod.initContainers?.map((c) => c.name)).toEqual(['topics']);
    expect(pod.initContainers?.[0].command?.join(' ')).toContain('ensureTopics');
  });
});

describe('the release prefix of topics, groups and Kafka users (external.kafka.prefix)', () => {
  /** The KAFKA_PREFIX each part of a render is given: the ConfigMap's, and the Job's containers'. */
  const prefixesOf = (ms: Manifest[]) => {
    const job = (ofKind(ms, 'Job')[0].spec as { template: { spec: PodSpec } }).template.spec;
    return {
      configMap: ofKind(ms, 'ConfigMap').find((m) => m.data?.KAFKA_BROKERS !== undefined)?.data?.KAFKA_PREFIX,
      job: (job.initContainers ?? []).map((c) => [
        c.name,
        c.env?.find((e) => e.name === 'KAFKA_PREFIX')?.value,
      ]),
    };
  };
  /** The Kafka users of the Deployments (the two inference Deployments share one). */
  const usersOf = (ms: Manifest[]) =>
    [
      ...new Set(
        ofKind(ms, 'Deployment').map(
          (d) => podOf(d).spec.containers[0].env?.find((e) => e.name === 'KAFKA_SASL_USERNAME')?.value,
        ),
      ),
    ]
      .filter((u): u is string => u !== undefined)
      .sort();
  test("is the namespace, the release's name and a dot each by default, given to every service and to the migration Job", () => {
    const ms = render();
    expect(prefixesOf(ms)).toEqual({ configMap: 'vision.vis.', job: [['bus', 'vision.vis.']] });
    // Every Deployment takes the ConfigMap whole, so every service reads the same KAFKA_PREFIX.
    const configMap = ofKind(ms, 'ConfigMap').find((m) => m.data?.KAFKA_PREFIX !== undefined)!.metadata.name;
    for (const d of ofKind(ms, 'Deployment'))
      for (const c of podOf(d).spec.containers)
        expect({ c: c.name, from: c.envFrom?.map((e) => e.configMapRef?.name) }).toEqual({
          c: c.name,
          from: expect.arrayContaining([configMap]),
        });
    expect(usersOf(ms)).toEqual(BUS_SERVICES.map((s) => `vision.vis.vision-${s}`).sort());
  });

  test('two releases, or one release name in two namespaces, share no prefix, no topic, no group and no Kafka user', () => {
    const releases = [renderIn('vision', 'staging'), renderIn('vision', 'prod'), renderIn('other', 'prod')];
    expect(releases.map((ms) => prefixesOf(ms).configMap)).toEqual([
      'vision.staging.',
      'vision.prod.',
      'other.prod.',
    ]);
    /** Each release's names on the brokers: its topics, its consumer groups and its Kafka users. */
    const namesOf = (ms: Manifest[]) => {
      const prefix = prefixesOf(ms).configMap!;
      return [
        ...busTopics(prefix),
        ...Object.values(BUS_GRANTS).flatMap((g) =>
          (g.consume as readonly { group: string }[]).map((c) => busName(prefix, c.group)),
        ),
        ...usersOf(ms),
      ];
    };
    const names = releases.map(namesOf);
    for (const [i, mine] of names.entries())
      for (const [j, theirs] of names.entries())
        if (i !== j)
          expect({ i, j, shared: mine.filter((n) => theirs.includes(n)) }).toEqual({ i, j, shared: [] });
    // What the walkthrough's release in the namespace vision is called on the brokers.
    expect(names[1]).toEqual(
      expect.arrayContaining([
        'vision.prod.vision.frames',
        'vision.prod.results',
        'vision.prod.vision-tasks',
      ]),
    );
  });

  test("the release's name alone, as the former default gave it, keeps the topics and users of a release installed with it", () => {
    const ms = render('--set-json', 'external.kafka.prefix="{{ .Release.Name }}."');
    expect(prefixesOf(ms)).toEqual({ configMap: 'vis.', job: [['bus', 'vis.']] });
    expect(usersOf(ms)).toEqual(BUS_SERVICES.map((s) => `vis.vision-${s}`).sort());
  });

  test('a namespace and a release too long for the default together stop the render, naming the value', () => {
    const r = runHelm(['template', 'r'.repeat(50), chartDir, '--namespace', 'n'.repeat(60), ...TEST_CLUSTER]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(
      `external.kafka.prefix renders as "${'n'.repeat(60)}.${'r'.repeat(50)}.": at most 100`,
    );
  });

  test("'' keeps the plain names and users of a release installed before the prefix; a template or a value sets it", () => {
    const plain = render('--set-string', 'external.kafka.prefix=');
    expect(prefixesOf(plain)).toEqual({ configMap: '', job: [['bus', '']] });
    expect(usersOf(plain)).toEqual(BUS_SERVICES.map((s) => `vision-${s}`).sort());
    const fixed = render('--set-string', 'external.kafka.prefix=eu-prod_1.');
    expect(prefixesOf(fixed).configMap).toBe('eu-prod_1.');
    expect(usersOf(fixed)).toContain('eu-prod_1.vision-tasks');
    const templated = render(
      '--set-json',
      'external.kafka.prefix="{{ .Release.Namespace }}-{{ .Release.Name }}."',
    );
    expect(prefixesOf(templated).configMap).toBe('vision-vis.');
  });

  test('brokers without authentication: the topics container creates the prefixed topics', () => {
    const ms = render(
      '--set',
      'external.kafka.allowUnauthenticated=true',
      '--set',
      'external.kafka.sasl.superUser.existingSecret=',
    );
    expect(prefixesOf(ms).job).toEqual([['topics', 'vision.vis.']]);
    const job = (ofKind(ms, 'Job')[0].spec as { template: { spec: PodSpec } }).template.spec;
    expect(job.initContainers?.[0].command?.join(' ')).toContain('busTopics(process.env.KAFKA_PREFIX)');
  });

  test('a prefix that is no part of a topic name stops the render', () => {
    expectRefused(
      'external.kafka.prefix',
      ['a b', 'a/b', 'x'.repeat(101)],
      '(the characters of a Kafka topic name)',
    );
  });
});

describe('the Kubernetes releases the chart installs on (kubeVersion)', () => {
  const templateFor = (version: string) =>
    runHelm(['template', 'vis', chartDir, ...TEST_CLUSTER, '--kube-version', version]);
  test("1.30 or later, vendors' builds included, as the preStop sleep action needs; an older cluster is refused", () => {
    const chart = parse(readFileSync(path.join(chartDir, 'Chart.yaml'), 'utf8')) as { kubeVersion?: string };
    expect(chart.kubeVersion).toBe('>=1.30.0-0');
    // The action that needs 1.30: every Deployment pauses with the kubelet's sleep before SIGTERM.
    for (const d of ofKind(render(), 'Deployment'))
      expect({ d: d.metadata.name, preStop: podOf(d).spec.containers[0] }).toMatchObject({
        d: d.metadata.name,
        preStop: { lifecycle: { preStop: { sleep: { seconds: 5 } } } },
      });
    for (const version of ['v1.30.0', 'v1.30.2-eks-1234', '1.31.0-gke.100', KUBE_VERSION])
      expect({ version, status: templateFor(version).status }).toEqual({ version, status: 0 });
    for (const version of ['v1.29.9', 'v1.25.0']) {
      const r = templateFor(version);
      expect({ version, status: r.status, stderr: r.stderr }).toEqual({
        version,
        status: 1,
        stderr: expect.stringContaining(
          `chart requires kubeVersion: >=1.30.0-0 which is incompatible with Kubernetes ${version}`,
        ),
      });
    }
  });
  test('docs/KUBERNETES.md gives 1.30 as the oldest release, and no other', () => {
    const doc = readFileSync(path.join(repoRoot, 'docs/KUBERNETES.md'), 'utf8');
    expect(doc).toContain('Prerequisites: Kubernetes 1.30 or later');
    expect(doc.match(/Kubernetes 1\.\d+ or later/g)?.every((m) => m === 'Kubernetes 1.30 or later')).toBe(
      true,
    );
  });
});

describe('each component kept apart from its own replicas (podAntiAffinity)', () => {
  interface Term {
    topologyKey: string;
    labelSelector: LabelSelector;
  }
  interface Affinity {
    podAntiAffinity?: {
      preferredDuringSchedulingIgnoredDuringExecution?: { weight: number; podAffinityTerm: Term }[];
      requiredDuringSchedulingIgnoredDuringExecution?: Term[];
    };
    nodeAffinity?: Obj;
  }
  const affinityOf = (d: Manifest) => (podOf(d).spec as PodSpec & { affinity?: Affinity }).affinity;
  /**
   * Each Deployment's one anti-affinity term selects exactly its own pods among the release's (the Deployment's own
   * selector: name, instance and component), never another component's nor another release's.
   */
  function checkTerms(ms: Manifest[], kind: 'soft' | 'hard', topologyKey: string) {
    const deployments = ofKind(ms, 'Deployment');
    expect(deployments.length).toBeGreaterThanOrEqual(7);
    for (const d of deployments) {
      const anti = affinityOf(d)?.podAntiAffinity;
      const terms =
        kind === 'soft'
          ? (anti?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((p) => {
              expect(p.weight).toBe(100);
              return p.podAffinityTerm;
            })
          : (anti?.requiredDuringSchedulingIgnoredDuringExecution ?? []);
      const own = (d.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
      const where = d.metadata.name;
      expect({ where, terms }).toEqual({
        where,
        terms: [{ topologyKey, labelSelector: { matchLabels: own } }],
      });
      expect(Object.keys(own).sort()).toEqual([
        'app.kubernetes.io/component',
        'app.kubernetes.io/instance',
        'app.kubernetes.io/name',
      ]);
      for (const other of deployments) {
        const labels = podOf(other).metadata.labels;
        expect({
          where,
          other: other.metadata.name,
          selects: selects(terms[0].labelSelector, labels),
        }).toEqual({
          where,
          other: other.metadata.name,
          selects: other === d,
        });
        // The same component of another release is not this one's sibling.
        const elsewhere = { ...labels, 'app.kubernetes.io/instance': 'other' };
        expect(selects(terms[0].labelSelector, elsewhere)).toBe(false);
      }
    }
  }
  test("soft by default and in the production-like values: each Deployment's term is its own selector, per node", () => {
    checkTerms(render(), 'soft', 'kubernetes.io/hostname');
    checkTerms(render('-f', productionValues), 'soft', 'kubernetes.io/hostname');
  });
  test('hard, per zone, beside node affinity of the values; none when the type is empty', () => {
    const ms = render(
      '--set',
      'podAntiAffinity.type=hard',
      '--set',
      'podAntiAffinity.topologyKey=topology.kubernetes.io/zone',
      '--set-json',
      'affinity={"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"pool","operator":"In","values":["vision"]}]}]}}}',
    );
    checkTerms(ms, 'hard', 'topology.kubernetes.io/zone');
    for (const d of ofKind(ms, 'Deployment')) expect(affinityOf(d)?.nodeAffinity).toBeDefined();
    for (const d of ofKind(render('--set', 'podAntiAffinity.type='), 'Deployment'))
      expect(affinityOf(d)).toBeUndefined();
  });
  test('a podAntiAffinity of affinity, one selector for every component, stops the render naming the way', () => {
    const r = runHelm([
      'template',
      'vis',
      chartDir,
      ...TEST_CLUSTER,
      '--set',
      'affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight=100',
    ]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(
      'affinity.podAntiAffinity would give every component one label selector: set podAntiAffinity.type (soft or hard)',
    );
    const bad = runHelm([
      'template',
      'vis',
      chartDir,
      ...TEST_CLUSTER,
      '--set',
      'podAntiAffinity.type=always',
    ]);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('podAntiAffinity');
  });
});

describe('no single pod by default: two or more of each component, each with a disruption budget', () => {
  const COMPONENTS = ['gateway', 'images', 'inference', 'inference-detect', 'quota', 'results', 'tasks'];
  /** The fewest pods each component runs: its HPA's minReplicas, or the Deployment's replicas. */
  const fewestPods = (ms: Manifest[]): Record<string, number> =>
    Object.fromEntries(
      ofKind(ms, 'Deployment').map((d) => {
        const hpa = ofKind(ms, 'HorizontalPodAutoscaler').find(
          (h) => (h.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name === d.metadata.name,
        );
        const n = hpa
          ? (hpa.spec as { minReplicas: number }).minReplicas
          : (d.spec as { replicas: number }).replicas;
        return [componentOf(d), n];
      }),
    );
  /**
   * Each component's one PodDisruptionBudget, selecting exactly its pods, lets an eviction take a pod while at least
   * one other runs (maxUnavailable 1, or minAvailable at least 1 and below the fewest pods).
   */
  function checkBudgets(ms: Manifest[]) {
    const fewest = fewestPods(ms);
    for (const d of ofKind(ms, 'Deployment')) {
      const c = componentOf(d)!;
      const own = (d.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
      const pdbs = ofKind(ms, 'PodDisruptionBudget').filter((p) =>
        matches(
          (p.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels,
          podOf(d).metadata.labels,
        ),
      );
      expect({ c, n: pdbs.length }).toEqual({ c, n: 1 });
      const spec = pdbs[0].spec as {
        maxUnavailable?: number;
        minAvailable?: number;
        selector: { matchLabels: Record<string, string> };
      };
      expect({ c, selector: spec.selector.matchLabels }).toEqual({ c, selector: own });
      const keeps = spec.minAvailable ?? fewest[c] - (spec.maxUnavailable ?? 0);
      expect({ c, keeps: keeps >= 1, evicts: keeps < fewest[c] }).toEqual({ c, keeps: true, evicts: true });
    }
  }
  test('the defaults: at least two pods of every component a call depends on, with the HPAs or without', () => {
    const ms = render();
    expect(Object.keys(fewestPods(ms)).sort()).toEqual(COMPONENTS);
    for (const [c, n] of Object.entries(fewestPods(ms)))
      expect({ c, atLeastTwo: n >= 2 }).toEqual({ c, atLeastTwo: true });
    checkBudgets(ms);
    const fixed = render(
      ...['gateway', 'results', 'images', 'inference', 'inferenceDetect'].flatMap((s) => [
        '--set',
        `services.${s}.autoscaling.enabled=false`,
      ]),
    );
    expect(ofKind(fixed, 'HorizontalPodAutoscaler')).toEqual([]);
    for (const [c, n] of Object.entries(fewestPods(fixed)))
      expect({ c, replicas: n }).toEqual({ c, replicas: 2 });
    checkBudgets(fixed);
  });
  test('the production-like and autoscaling values keep two or more of each, each with its budget', () => {
    for (const file of [productionValues, path.join(chartDir, 'ci/autoscaling-values.yaml')]) {
      const ms = render('-f', file);
      for (const [c, n] of Object.entries(fewestPods(ms)))
        expect({ file, c, atLeastTwo: n >= 2 }).toEqual({ file, c, atLeastTwo: true });
      checkBudgets(ms);
    }
  });
});

/** `helm template` of release `release` in `namespace`, for a test cluster. */
function renderIn(namespace: string, release: string, ...args: string[]): Manifest[] {
  const r = runHelm(['template', release, chartDir, '--namespace', namespace, ...TEST_CLUSTER, ...args]);
  if (r.status !== 0) throw new Error(`helm template failed: ${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

describe("the release prefix of the gateway's Redis keys (external.redis.keyPrefix)", () => {
  const gatewayOf = (ms: Manifest[]) => ofKind(ms, 'Deployment').find((d) => componentOf(d) === 'gateway')!;
  /** GATEWAY_REDIS_PREFIX as the gateway's own configuration reads it from its rendered environment. */
  const prefixOf = (ms: Manifest[]) => loadWithSecretFiles(ms, gatewayOf(ms)).GATEWAY_REDIS_PREFIX as string;
  const LIMITS = { qps: 20, burst: 40, concurrency: 16 };

  test('is the namespace, the release and a dot each by default, read by the gateway', () => {
    const ms = render();
    expect(environmentOf(ms, gatewayOf(ms)).GATEWAY_REDIS_PREFIX).toBe('vision.vis.');
    expect(prefixOf(ms)).toBe('vision.vis.');
    expect(gatewayRedisKeys(prefixOf(ms), 'acme', LIMITS)).toEqual([
      'vision.vis.gw:rate:20:40:qps:acme',
      'vision.vis.gw:rate:20:40:burst:qps:acme',
      'vision.vis.gw:slots:conc:acme',
    ]);
    expect(prefixOf(render('-f', productionValues))).toBe('vision.vis.');
  });
  test('one release name in two namespaces, or two releases in one, share no prefix and no key', () => {
    const prefixes = [
      prefixOf(renderIn('shop', 'vision')),
      prefixOf(renderIn('staging', 'vision')),
      prefixOf(renderIn('shop', 'vision-canary')),
    ];
    expect(prefixes).toEqual(['shop.vision.', 'staging.vision.', 'shop.vision-canary.']);
    const keys = prefixes.map((p) => gatewayRedisKeys(p, 'acme', LIMITS));
    expect(new Set(keys.flat()).size).toBe(keys.flat().length);
  });
  test("'' keeps the plain gw: keys; a value or another template sets it; one with a colon stops the render", () => {
    expect(prefixOf(render('--set-string', 'external.redis.keyPrefix='))).toBe('');
    expect(gatewayRedisKeys('', 'acme', LIMITS)[0]).toBe('gw:rate:20:40:qps:acme');
    expect(prefixOf(render('--set-string', 'external.redis.keyPrefix=eu-prod_1.'))).toBe('eu-prod_1.');
    expect(prefixOf(render('--set-json', 'external.redis.keyPrefix="{{ .Release.Name }}-rl."'))).toBe(
      'vis-rl.',
    );
    expectRefused('external.redis.keyPrefix', ['a:b', 'a b', 'x'.repeat(101)], '(no colon)');
  });
});

test("helm install's notes name the release's Kafka prefix and its users", () => {
  const notes = renderNotes();
  expect(notes).toContain('each bus service signs in as vision.vis.vision-<service> (SCRAM-SHA-512)');
  expect(notes).toContain('groups carry the prefix "vision.vis." too');
});

describe('egress of results, images, quota and the detect pool: DNS, the services each calls, its servers', () => {
  const PUBLIC_ON_ANY_PORT = PUBLIC_RULE;
  /** A rule to one component's pods of the release, on its port. */
  const callRule = (component: string, port: number) => ({
    to: [
      {
        podSelector: {
          matchLabels: {
            'app.kubernetes.io/name': 'vision',
            'app.kubernetes.io/instance': 'vis',
            'app.kubernetes.io/component': component,
          },
        },
      },
    ],
    ports: [{ port, protocol: 'TCP' }],
  });
  const PORTS: Record<string, number> = { ...SERVICE_PORTS, 'inference-detect': SERVICE_PORTS.inference };
  const labelsOf = (ms: Manifest[], component: string) =>
    podOf(ofKind(ms, 'Deployment').find((d) => componentOf(d) === component)!).metadata.labels;
  /**
   * NetworkPolicy semantics for a connection from pods with `from` labels to a pod of the release namespace with `to`
   * labels on TCP `port`: some rule of a policy selecting the sender has the port (or none) and a peer selecting it.
   */
  function egressAllowsPod(
    ms: Manifest[],
    from: Record<string, string>,
    to: Record<string, string>,
    port: number,
  ) {
    return egressOf(ms, from).some((spec) =>
      (spec.egress ?? []).some(
        (rule) =>
          (!rule.ports || rule.ports.some((p) => p.port === port && p.protocol === 'TCP')) &&
          (rule.to ?? []).some(
            (peer) =>
              peer.ipBlock === undefined &&
              (peer.namespaceSelector ? selects(peer.namespaceSelector, RELEASE_NS) : true) &&
              (peer.podSelector ? selects(peer.podSelector, to) : true),
          ),
      ),
    );
  }
  /** Which of the release's components a component's pods may open a connection to, on each one's port. */
  const reachable = (ms: Manifest[], from: string) =>
    EVERY_COMPONENT.filter(
      (c) =>
        ofKind(ms, 'Deployment').some((d) => componentOf(d) === c) &&
        egressAllowsPod(ms, labelsOf(ms, from), labelsOf(ms, c), PORTS[c]),
    );

  test('by default: exactly these rules, each on its ports, public addresses for the webhooks of results only', () => {
    const ms = render();
    const kafka = backendRule(NAMESPACE_PODS, 9092);
    const otlp = backendRule(NAMESPACE_PODS, 4318);
    const postgres = backendRule(NAMESPACE_PODS, 5432);
    const s3 = backendRule(NAMESPACE_PODS, 9000);
    const expected: Record<string, unknown[]> = {
      results: [
        DNS_RULE,
        callRule('inference', 8105),
        callRule('tasks', 8101),
        kafka,
        otlp,
        postgres,
        s3,
        PUBLIC_ON_ANY_PORT,
      ],
      images: [
        DNS_RULE,
        callRule('inference-detect', 8105),
        callRule('quota', 8102),
        kafka,
        otlp,
        postgres,
        s3,
      ],
      quota: [DNS_RULE, kafka, otlp, postgres],
      'inference-detect': [DNS_RULE, kafka, otlp, s3],
    };
    for (const [where, rules] of Object.entries(expected)) {
      const got = streamRulesOf(ms, where);
      expect({ where, rules: got.rules }).toEqual({ where, rules });
      const policy = ofKind(ms, 'NetworkPolicy').find(
        (np) =>
          (np.spec as unknown as EgressSpec).policyTypes.includes('Egress') &&
          (np.spec as unknown as EgressSpec).podSelector.matchLabels?.['app.kubernetes.io/component'] ===
            where,
      );
      expect(policy?.metadata.name).toBe(`vis-vision-${where}-egress`);
    }
    // The services each one calls (the routes of files/identity-routes.yaml whose issuer it is), and no other pod.
    expect(Object.fromEntries(Object.keys(expected).map((c) => [c, reachable(ms, c)]))).toEqual({
      results: ['inference', 'tasks'],
      images: ['inference-detect', 'quota'],
      quota: [],
      'inference-detect': [],
    });
    // Not even the services it calls on another port (their metrics port, say).
    expect(egressAllowsPod(ms, labelsOf(ms, 'results'), labelsOf(ms, 'tasks'), 9464)).toBe(false);
    // Addresses outside the cluster: public ones for results (a webhook's host, on any port), none for the others.
    const probes: [string, number][] = [
      ['93.184.216.34', 443],
      ['93.184.216.34', 8443],
      ['169.254.169.254', 80],
      ['10.0.0.1', 443],
      ['192.168.1.1', 80],
      ['127.0.0.1', 80],
    ];
    const verdicts = (c: string) => probes.map(([ip, port]) => egressAllowsIp(ms, labelsOf(ms, c), ip, port));
    expect(verdicts('results')).toEqual([true, true, false, false, false, false]);
    for (const c of ['images', 'quota', 'inference-detect'])
      expect({ c, verdicts: verdicts(c) }).toEqual({ c, verdicts: probes.map(() => false) });
  });

  test("helm install's notes say what every pod may reach, a public server as such", () => {
    const notes = renderNotes('-f', productionValues);
    expect(notes).toContain('Egress (networkPolicy.streamEgress): every pod may reach DNS and its servers');
    expect(notes).toContain(
      'results the services it calls, public addresses (webhooks) and extraWebhookEgress',
    );
    expect(notes).toContain('s3: public addresses ports [{"port":443,"protocol":"TCP"}]');
  });

  test('without the detect pool images calls the job-running inference pods instead', () => {
    const ms = render('--set', 'services.inferenceDetect.enabled=false');
    expect(egressLimited(ms)).toEqual(EVERY_COMPONENT.filter((c) => c !== 'inference-detect'));
    expect(reachable(ms, 'images')).toEqual(['inference', 'quota']);
  });

  test('extraWebhookEgress widens results alone; extraEgress the stream-opening pods alone', () => {
    const ms = render(
      '--set-json',
      'networkPolicy.streamEgress.extraWebhookEgress=[{"to":[{"ipBlock":{"cidr":"10.60.0.10/32"}}],"ports":[{"port":8443,"protocol":"TCP"}]}]',
      '--set-json',
      'networkPolicy.streamEgress.extraEgress=[{"to":[{"ipBlock":{"cidr":"10.50.0.0/16"}}],"ports":[{"port":554,"protocol":"TCP"}]}]',
    );
    const receiver = {
      to: [{ ipBlock: { cidr: '10.60.0.10/32' } }],
      ports: [{ port: 8443, protocol: 'TCP' }],
    };
    const camera = { to: [{ ipBlock: { cidr: '10.50.0.0/16' } }], ports: [{ port: 554, protocol: 'TCP' }] };
    expect(streamRulesOf(ms, 'results').rules.slice(-2)).toEqual([PUBLIC_RULE, receiver]);
    for (const c of ['tasks', 'inference'])
      expect(streamRulesOf(ms, c).rules.slice(-2)).toEqual([PUBLIC_RULE, camera]);
    const at = (c: string, ip: string, port: number) => egressAllowsIp(ms, labelsOf(ms, c), ip, port);
    expect([at('results', '10.60.0.10', 8443), at('results', '10.50.0.1', 554)]).toEqual([true, false]);
    expect([at('tasks', '10.60.0.10', 8443), at('tasks', '10.50.0.1', 554)]).toEqual([false, true]);
    for (const c of ['gateway', 'images', 'quota', 'inference-detect'])
      expect({ c, got: [at(c, '10.60.0.10', 8443), at(c, '10.50.0.1', 554)] }).toEqual({
        c,
        got: [false, false],
      });
  });

  test('a server on public addresses (an empty `to`) is reached on its ports only by the pods without public egress', () => {
    const ms = render('-f', productionValues);
    // AWS S3 in the production-like values: `to: []` and port 443.
    const publicS3 = { to: PUBLIC_RULE.to, ports: [{ port: 443, protocol: 'TCP' }] };
    for (const c of ['images', 'inference-detect']) {
      expect({
        c,
        has: streamRulesOf(ms, c).rules.some((r) => JSON.stringify(r) === JSON.stringify(publicS3)),
      }).toEqual({
        c,
        has: true,
      });
      expect({ c, s3: egressAllowsIp(ms, labelsOf(ms, c), '52.219.170.1', 443) }).toEqual({ c, s3: true });
      expect({ c, other: egressAllowsIp(ms, labelsOf(ms, c), '52.219.170.1', 80) }).toEqual({
        c,
        other: false,
      });
    }
    // Quota and the gateway use no object store: nothing public.
    for (const c of ['quota', 'gateway'])
      expect({ c, s3: egressAllowsIp(ms, labelsOf(ms, c), '52.219.170.1', 443) }).toEqual({ c, s3: false });
    // No rule of any policy allows every destination.
    for (const np of ofKind(ms, 'NetworkPolicy'))
      for (const rule of (np.spec as unknown as EgressSpec).egress ?? [])
        expect({ np: np.metadata.name, empty: (rule.to ?? []).length === 0 }).toEqual({
          np: np.metadata.name,
          empty: false,
        });
  });
});
