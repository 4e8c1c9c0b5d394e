/**
 * The Helm chart installed on a real Kubernetes API server: a kwok cluster (scripts/kube/cluster.sh: etcd,
 * kube-apiserver, controller-manager and scheduler v1.35.4; kwok fakes nodes and pods, so no container runs)
 * with prometheus-operator's ServiceMonitor and PrometheusRule CRDs and Gateway API's standard channel (the API server
 * stores the chart's Gateway and HTTPRoute; no implementation serves them here). `helm install --wait` with the default
 * values and the values files of charts/vision/ci; the objects read back from the API server; `helm test`;
 * `helm upgrade` to a new image tag and `helm rollback`. The commands are those of docs/KUBERNETES.md,
 * "Install on Kubernetes". Needs the binaries of scripts/kube/install.sh (npm test compiles them in the background
 * during its set-up and runs this file in a phase of its own once they are there: scripts/test-all.sh).
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { repoRoot } from './deploy-support';
import {
  chart,
  createExistingSecrets,
  createKafkaAdminSecret,
  install,
  runTestCommand,
} from './kube-release';
import {
  checkDeploymentsAsStored,
  checkRolledOut,
  componentOf,
  expectLockedDown,
  IMAGE_USER,
} from './kube-checks';
import type { PodSpec } from './kube-checks';
import {
  type Cluster,
  crdFiles,
  eventually,
  gatewayApiCrdDir,
  kubeBin,
  type KubeObject,
  missingKubeParts,
  startCluster,
} from './kube-support';

jest.setTimeout(30 * 60 * 1000);

const ci = (name: string) => `charts/vision/ci/${name}-values.yaml`;
const COMPONENTS = ['gateway', 'images', 'inference', 'inference-detect', 'quota', 'results', 'tasks'];
const missing = missingKubeParts();

let k: Cluster;

test('docs/KUBERNETES.md, "Install on Kubernetes", gives the commands this test runs', () => {
  const doc = readFileSync(path.join(repoRoot, 'docs/KUBERNETES.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Install on Kubernetes'));
  for (const command of [
    'bash scripts/kube/install.sh',
    'bash scripts/kube/cluster.sh',
    'kubectl apply --server-side -f ~/.cache/vision-kube/crds/',
    'kubectl apply --server-side -f ~/.cache/vision-kube/crds/gateway-api/',
    'node scripts/identity-keys.js --kubernetes vision-identity | kubectl -n vision apply -f -',
    'kubectl -n vision create secret generic vision-kafka-admin',
    'kubectl -n vision create secret generic vision-secrets',
    `helm install vision ${chart} -n vision -f ${ci('existing-secrets')} --wait --timeout 5m`,
    'helm status vision -n vision -o json',
    'kubectl -n vision get events --field-selector involvedObject.kind=Job,involvedObject.name=vision-migrate',
    'helm get manifest vision -n vision | kubectl -n vision get -f -',
    'helm test vision -n vision --timeout 2m',
    `helm upgrade vision ${chart} -n vision --reuse-values --set image.tag=0.1.1 --wait --timeout 5m`,
    'kubectl -n vision rollout status deployment/vision-gateway --timeout=120s',
    'helm history vision -n vision',
    'helm rollback vision 1 -n vision --wait --timeout 5m',
  ])
    expect({ command, documented: section.includes(command) }).toEqual({ command, documented: true });
});

if (missing.length > 0) {
  const names = missing.map((f) => path.relative(path.dirname(kubeBin), f)).join(', ');
  test.skip(`the chart on a kwok cluster: ${names} missing in ${path.dirname(kubeBin)} (scripts/kube/install.sh)`, () => {
    throw new Error('the kwok cluster cannot start');
  });
} else {
  beforeAll(async () => {
    const helm = execFileSync(path.join(repoRoot, 'scripts/ensure-helm.sh'), {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }).trim();
    k = await startCluster(helm);
    k.run('kubectl', [
      'apply',
      '--server-side',
      ...[...crdFiles, gatewayApiCrdDir].flatMap((f) => ['-f', f]),
    ]);
    k.run('kubectl', [
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/servicemonitors.monitoring.coreos.com',
      'crd/prometheusrules.monitoring.coreos.com',
      'crd/gateways.gateway.networking.k8s.io',
      'crd/httproutes.gateway.networking.k8s.io',
    ]);
  });
  afterAll(async () => {
    await k?.stop();
  });

  describe('default values', () => {
    const ns = 'vision';
    test('helm install --wait: the migration hook completes, every Deployment becomes available', () => {
      // The defaults' development credentials, allowed explicitly (a throwaway cluster); the brokers' super user from
      // a Secret made first, with which the migration Job provisions the services' Kafka principals.
      createKafkaAdminSecret(k, ns);
      const kinds = install(
        k,
        ns,
        [],
        ['allowDefaultCredentials=true', 'external.kafka.sasl.superUser.existingSecret=vision-kafka-admin'],
      );
      for (const kind of [
        'Deployment',
        'Service',
        'HorizontalPodAutoscaler',
        'PodDisruptionBudget',
        'NetworkPolicy',
        'ConfigMap',
        'Secret',
      ])
        expect(kinds).toContain(kind);
      expect(checkDeploymentsAsStored(k, ns)).toEqual(COMPONENTS);
      // The user the pods run as is the image's own.
      expect(readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8')).toMatch(
        new RegExp(`^USER ${IMAGE_USER}:${IMAGE_USER}$`, 'm'),
      );
    });
    test('the HPAs scale their Deployments to minReplicas', async () => {
      const hpas = k.get(['hpa', '-n', ns]);
      expect(hpas.map(componentOf).sort()).toEqual([
        'gateway',
        'images',
        'inference',
        'inference-detect',
        'results',
      ]);
      await eventually(() => {
        for (const h of hpas) {
          const { minReplicas, scaleTargetRef } = h.spec as {
            minReplicas: number;
            scaleTargetRef: { name: string };
          };
          const [d] = k.get(['deployment', scaleTargetRef.name, '-n', ns]);
          expect({ d: d.metadata.name, available: d.status?.availableReplicas }).toEqual({
            d: d.metadata.name,
            available: minReplicas,
          });
        }
      });
    });
    test('helm test: its pod, as stored, asks the gateway Service for /readyz and succeeds only on {"status":"up"}', async () => {
      k.run('helm', ['test', 'vision', '-n', ns, '--timeout', '2m']);
      const [pod] = k.get(['pod', 'vision-test-gateway-ready', '-n', ns]);
      expect(pod.status?.phase).toBe('Succeeded');
      const spec = pod.spec as unknown as PodSpec & { restartPolicy: string };
      const [c] = spec.containers;
      expect(spec.restartPolicy).toBe('Never');
      expect(c.image).toBe('ghcr.io/vision/vision:0.1.0');
      expectLockedDown('test pod', spec, c);
      expect(c.command?.slice(0, 2)).toEqual(['node', '-e']);
      // The target is the gateway Service's http port, which leads to the gateway container's http port.
      const [svc] = k.get(['service', 'vision-gateway', '-n', ns]);
      const port = (svc.spec as { ports: { name: string; port: number; targetPort: string }[] }).ports.find(
        (p) => p.name === 'http',
      );
      expect(port?.targetPort).toBe('http');
      expect(c.command?.[3]).toBe(`http://vision-gateway:${port?.port}/readyz`);
      // kwok marks the pod succeeded without running it: run its command here against stand-in gateways.
      const answers: [number, string, number][] = [
        [200, '{"status":"up"}', 0],
        [503, '{"status":"down"}', 1],
        [200, '{"status":"down"}', 1],
      ];
      for (const [status, body, code] of answers) {
        const server = http.createServer((req, res) =>
          res.writeHead(req.url === '/readyz' ? status : 404).end(body),
        );
        server.listen(0, '127.0.0.1');
        await once(server, 'listening');
        const { port: p } = server.address() as AddressInfo;
        const got = await runTestCommand(c.command as string[], `http://127.0.0.1:${p}/readyz`);
        server.close();
        expect({ status, body, code: got }).toEqual({ status, body, code });
      }
      expect(await runTestCommand(c.command as string[], 'http://127.0.0.1:1/readyz')).toBe(1);
    });
    test('helm upgrade to a new image tag rolls every Deployment, keeping the Kafka passwords; helm rollback returns', async () => {
      const before = Object.fromEntries(
        k.get(['deployments', '-n', ns]).map((d) => [d.metadata.name, d.metadata.generation]),
      );
      /** The generated Kafka passwords of the release's Secret (KAFKA_<SERVICE>_PASSWORD). */
      const kafkaPasswords = () =>
        Object.entries(
          (k.get(['secret', 'vision-secrets', '-n', ns])[0] as unknown as { data: Record<string, string> })
            .data,
        ).filter(([key]) => /^KAFKA_[A-Z]+_PASSWORD$/.test(key));
      const passwords = kafkaPasswords();
      expect(passwords).toHaveLength(5);
      k.run('helm', [
        'upgrade',
        'vision',
        chart,
        '-n',
        ns,
        '--reuse-values',
        '--set',
        'image.tag=0.1.1',
        '--wait',
        '--timeout',
        '5m',
      ]);
      for (const d of k.get(['deployments', '-n', ns]))
        expect(d.metadata.generation).toBeGreaterThan(before[d.metadata.name] ?? 0);
      // Read back from the release's Secret (lookup): the passwords the migration Job set at the brokers stay.
      expect(kafkaPasswords()).toEqual(passwords);
      await eventually(() => checkRolledOut(k, ns, 'ghcr.io/vision/vision:0.1.1'));
      for (const name of COMPONENTS)
        k.run('kubectl', ['-n', ns, 'rollout', 'status', `deployment/vision-${name}`, '--timeout=120s']);
      k.run('helm', ['rollback', 'vision', '1', '-n', ns, '--wait', '--timeout', '5m']);
      await eventually(() => checkRolledOut(k, ns, 'ghcr.io/vision/vision:0.1.0'));
      const history = JSON.parse(k.run('helm', ['history', 'vision', '-n', ns, '-o', 'json'])) as {
        revision: number;
        status: string;
        description: string;
      }[];
      expect(history.map((h) => [h.revision, h.status, h.description])).toEqual([
        [1, 'superseded', 'Install complete'],
        [2, 'superseded', 'Upgrade complete'],
        [3, 'deployed', 'Rollback to 1'],
      ]);
    });
    test('an upgrade that would move the release to another Kafka prefix stops, naming the one it runs on; movePrefix lets it', () => {
      const upgrade = (...args: string[]) =>
        k.run('helm', ['upgrade', 'vision', chart, '-n', ns, '--reuse-values', ...args]);
      // The former default, the release's name alone: what an upgrade from a release installed with it renders.
      expect(() => upgrade('--set-json', 'external.kafka.prefix="{{ .Release.Name }}."')).toThrow(
        'external.kafka.prefix renders as "vision.", but the release runs on the prefix "vision.vision.": to keep its ' +
          'topics, groups and Kafka users set external.kafka.prefix="vision.vision."',
      );
      expect(JSON.parse(k.run('helm', ['history', 'vision', '-n', ns, '-o', 'json']))).toHaveLength(3);
      upgrade(
        '--set-string',
        'external.kafka.prefix=moved.',
        '--set',
        'external.kafka.movePrefix=true',
        '--dry-run=server',
      );
      // The same prefix, however it is spelt, passes.
      upgrade('--set-string', 'external.kafka.prefix=vision.vision.', '--dry-run=server');
    });
  });

  test('ingress with TLS for Traefik (ci/ingress-tls-values.yaml): the gateway Ingress as stored, no annotation of the chart', () => {
    const ns = 'vision-ingress';
    // Brokers without authentication, said explicitly (a throwaway cluster).
    install(
      k,
      ns,
      [ci('ingress-tls')],
      ['allowDefaultCredentials=true', 'external.kafka.allowUnauthenticated=true'],
    );
    const [ing] = k.get(['ingress', '-n', ns]);
    expect(ing.metadata.name).toBe('vision-gateway');
    expect(ing.metadata.annotations).toEqual({
      'cert-manager.io/cluster-issuer': 'letsencrypt',
      'traefik.ingress.kubernetes.io/router.tls': 'true',
      'meta.helm.sh/release-name': 'vision',
      'meta.helm.sh/release-namespace': ns,
    });
    expect(ing.spec).toEqual({
      ingressClassName: 'traefik',
      tls: [{ hosts: ['vision.example.com'], secretName: 'vision-tls' }],
      rules: [
        {
          host: 'vision.example.com',
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: 'vision-gateway', port: { name: 'http' } } },
              },
            ],
          },
        },
      ],
    });
    expect(checkDeploymentsAsStored(k, ns)).toEqual(COMPONENTS);
  });

  test("a Gateway of the release with TLS (ci/gateway-tls-values.yaml): the Gateway and the HTTPRoute as stored, to the gateway Service's http port", () => {
    const ns = 'vision-route';
    install(
      k,
      ns,
      [ci('gateway-tls')],
      ['allowDefaultCredentials=true', 'external.kafka.allowUnauthenticated=true'],
    );
    const [gateway] = k.get(['gateways.gateway.networking.k8s.io', '-n', ns]);
    expect(gateway.metadata.name).toBe('vision');
    expect(gateway.spec).toMatchObject({
      gatewayClassName: 'traefik',
      listeners: [
        {
          name: 'https',
          protocol: 'HTTPS',
          port: 443,
          hostname: 'vision.example.com',
          tls: { mode: 'Terminate', certificateRefs: [{ kind: 'Secret', name: 'vision-tls' }] },
          allowedRoutes: { namespaces: { from: 'Same' } },
        },
      ],
    });
    const route = storedRoute(k, ns);
    expect(route.parentRefs).toEqual([
      { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'vision', sectionName: 'https' },
    ]);
    expect(route.hostnames).toEqual(['vision.example.com']);
    expect(checkDeploymentsAsStored(k, ns)).toEqual(COMPONENTS);
  });

  test('autoscaling (ci/autoscaling-values.yaml): HPAs and PDBs as stored, Deployments at minReplicas', async () => {
    const ns = 'vision-autoscaling';
    install(
      k,
      ns,
      [ci('autoscaling')],
      ['allowDefaultCredentials=true', 'external.kafka.allowUnauthenticated=true'],
    );
    const hpa = Object.fromEntries(
      k
        .get(['hpa', '-n', ns])
        .map((h) => [
          componentOf(h),
          h.spec as { minReplicas: number; maxReplicas: number; metrics: { type: string }[] },
        ]),
    );
    expect(Object.keys(hpa).sort()).toEqual([
      'gateway',
      'images',
      'inference',
      'inference-detect',
      'results',
    ]);
    expect(hpa.gateway).toMatchObject({ minReplicas: 3, maxReplicas: 12 });
    expect(hpa.images.metrics.map((m) => m.type)).toEqual(['Resource', 'Pods']);
    const pdb = Object.fromEntries(
      k
        .get(['pdb', '-n', ns])
        .map((p) => [componentOf(p), (p.spec as { minAvailable?: number }).minAvailable]),
    );
    expect(pdb).toMatchObject({ gateway: 2, results: 2, images: 2, 'inference-detect': 1, inference: 1 });
    await eventually(() => {
      const replicas = Object.fromEntries(
        k.get(['deployments', '-n', ns]).map((d) => [componentOf(d), d.status?.availableReplicas]),
      );
      expect(replicas).toMatchObject({
        gateway: 3,
        results: 3,
        images: 3,
        'inference-detect': 2,
        inference: 2,
      });
    });
    checkDeploymentsAsStored(k, ns);
  });

  test('existing Secrets and models claim (ci/existing-secrets-values.yaml): pods read them, the chart makes none', () => {
    const ns = 'vision-existing';
    createExistingSecrets(k, ns);
    install(k, ns, [ci('existing-secrets')]);
    const secrets = k
      .get(['secrets', '-n', ns])
      .map((s) => s.metadata.name)
      .filter((n) => !n.startsWith('sh.helm.'));
    expect(secrets.sort()).toEqual(['vision-identity', 'vision-kafka-admin', 'vision-secrets']);
    expect(checkDeploymentsAsStored(k, ns, { claim: 'vision-models' })).toEqual(COMPONENTS);
    const [tasks] = k.get(['deployment', 'vision-tasks', '-n', ns]);
    const env = (tasks.spec as { template: { spec: PodSpec } }).template.spec.containers[0].env?.map(
      (e) => e.name,
    );
    expect(env).toContain('TASKS_ADMIN_TOKEN_FILE');
    expect(env).toEqual(expect.arrayContaining(['KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD_FILE']));
  });

  test('production-like values (ci/production-values.yaml): egress of every component, ServiceMonitor and PrometheusRule accepted', () => {
    const ns = 'vision-production';
    createExistingSecrets(k, ns);
    const kinds = install(k, ns, [ci('production')]);
    expect(kinds).toEqual(
      expect.arrayContaining(['ServiceMonitor', 'PrometheusRule', 'HTTPRoute', 'NetworkPolicy']),
    );
    expect(kinds).not.toContain('Ingress');
    expect(kinds).not.toContain('Gateway');
    // On the shared Gateway of another namespace, which need not exist for the API server to store the route.
    expect(storedRoute(k, ns).parentRefs).toEqual([
      {
        group: 'gateway.networking.k8s.io',
        kind: 'Gateway',
        name: 'shared',
        namespace: 'gateway-system',
        sectionName: 'https',
      },
    ]);
    // The gateway pods admit the shared Gateway's proxies to their http port, as stored (and Prometheus to metrics).
    const [policy] = k.get(['networkpolicy', 'vision-gateway', '-n', ns]);
    const rules = (policy.spec as { ingress: { ports: { port: string }[] }[] }).ingress;
    expect(rules.filter((r) => r.ports.some((p) => p.port === 'http'))).toEqual([
      {
        from: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'gateway-system' } },
            podSelector: { matchLabels: { 'gateway.networking.k8s.io/gateway-name': 'shared' } },
          },
        ],
        ports: [{ port: 'http', protocol: 'TCP' }],
      },
    ]);
    const egress = k
      .get(['networkpolicy', '-n', ns])
      .filter((p) => (p.spec as { policyTypes: string[] }).policyTypes.includes('Egress'));
    expect(egress.map(componentOf).sort()).toEqual(COMPONENTS);
    expect(checkDeploymentsAsStored(k, ns, { claim: 'vision-models' })).toEqual(COMPONENTS);
  });
}

interface StoredRoute {
  parentRefs: Record<string, string>[];
  hostnames?: string[];
  rules: { matches: unknown[]; backendRefs: Record<string, unknown>[]; timeouts?: Record<string, string> }[];
}
/**
 * The release's one HTTPRoute as stored: every path to the gateway Service's http port as stored, with no request
 * timeout. Returns its spec.
 */
function storedRoute(k: Cluster, ns: string): StoredRoute {
  const routes: KubeObject[] = k.get(['httproutes.gateway.networking.k8s.io', '-n', ns]);
  expect(routes.map((r) => r.metadata.name)).toEqual(['vision-gateway']);
  const spec = routes[0].spec as unknown as StoredRoute;
  const [svc] = k.get(['service', 'vision-gateway', '-n', ns]);
  const http = (svc.spec as { ports: { name: string; port: number }[] }).ports.find((p) => p.name === 'http');
  expect(spec.rules).toEqual([
    {
      matches: [{ path: { type: 'PathPrefix', value: '/' } }],
      backendRefs: [{ group: '', kind: 'Service', name: 'vision-gateway', port: http?.port, weight: 1 }],
      timeouts: { request: '0s' },
    },
  ]);
  return spec;
}
