/**
 * Checks of a release's objects as the API server stores them (defaults applied): the pods run what the image
 * and the services need: command, ports, probes, user, read-only root filesystem, variables, mounts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '@vision/shared';
import { SHAPES, type ServiceName, requiredVariables } from './deploy-support';
import type { Cluster, KubeObject } from './kube-support';

export interface Container {
  name: string;
  image: string;
  command?: string[];
  ports?: { name: string; containerPort: number; protocol: string }[];
  env?: { name: string; value?: string }[];
  envFrom?: { configMapRef?: { name: string } }[];
  startupProbe?: { httpGet?: { path: string; port: string | number; scheme: string } };
  livenessProbe?: { httpGet?: { path: string; port: string | number; scheme: string } };
  readinessProbe?: { httpGet?: { path: string; port: string | number; scheme: string } };
  securityContext?: {
    runAsUser?: number;
    runAsNonRoot?: boolean;
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { drop?: string[] };
  };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean; subPath?: string }[];
}
export interface Volume {
  name: string;
  emptyDir?: { sizeLimit?: string };
  secret?: { secretName: string; items?: { key: string; path: string }[] };
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
}
export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  securityContext?: { runAsUser?: number; runAsNonRoot?: boolean; fsGroup?: number };
  automountServiceAccountToken?: boolean;
}

export const podOf = (d: KubeObject) => (d.spec as { template: { spec: PodSpec } }).template.spec;
export const componentOf = (o: KubeObject) => o.metadata.labels?.['app.kubernetes.io/component'] ?? '';
export const programOf = (component: string) =>
  (component === 'inference-detect' ? 'inference' : component) as ServiceName;

/** The variable each service takes its listening port from (its config.ts). */
const PORT_VARIABLE: Record<ServiceName, string> = {
  gateway: 'PORT',
  tasks: 'TASKS_PORT',
  quota: 'QUOTA_PORT',
  results: 'RESULTS_PORT',
  images: 'IMAGES_PORT',
  inference: 'INFERENCE_PORT',
};

/** The user the image runs as (Dockerfile `USER 1000:1000`). */
export const IMAGE_USER = 1000;

/** Security settings every container of the release has (the container tests run the image this way). */
export function expectLockedDown(where: string, pod: PodSpec, c: Container) {
  expect({ where, pod: pod.securityContext }).toMatchObject({
    where,
    pod: { runAsUser: IMAGE_USER, runAsNonRoot: true, fsGroup: IMAGE_USER },
  });
  expect({ where, sc: c.securityContext }).toMatchObject({
    where,
    sc: {
      runAsUser: IMAGE_USER,
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    },
  });
  expect(pod.automountServiceAccountToken).toBe(false);
}

/**
 * Every Deployment of the release as stored: the service's command, its http port being the one its own config
 * loader reads from the pod's environment (ConfigMap, env, and the Secret files its `<KEY>_FILE` variables name,
 * read back from the API), the metrics port, probes on those ports, the user and filesystem, the variables the
 * service requires, and the mounts. Returns the components seen.
 */
export function checkDeploymentsAsStored(k: Cluster, ns: string, models?: { claim: string }): string[] {
  const deployments = k.get(['deployments', '-n', ns]);
  const [configMap] = k.get(['configmaps', '-n', ns, '-l', 'app.kubernetes.io/name=vision']);
  const secrets = new Map(k.get(['secrets', '-n', ns]).map((s) => [s.metadata.name, s.data ?? {}]));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vision-kube-secrets-'));
  try {
    for (const d of deployments) {
      const component = componentOf(d);
      const program = programOf(component);
      const pod = podOf(d);
      const [c] = pod.containers;
      const where = `${ns}/${d.metadata.name}`;
      expect({ where, command: c.command }).toEqual({
        where,
        command: ['node', `services/${program}/dist/main.js`],
      });
      expectLockedDown(where, pod, c);

      // The environment the process gets, with each <KEY>_FILE pointing at a copy of the Secret file.
      expect(c.envFrom?.map((e) => e.configMapRef?.name)).toEqual([configMap.metadata.name]);
      const env: Record<string, string> = { ...configMap.data };
      for (const e of c.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
      for (const [name, file] of Object.entries(env).filter(
        ([n, v]) => n.endsWith('_FILE') && v.startsWith('/var/run/'),
      )) {
        const mount = c.volumeMounts?.find((m) => m.mountPath === path.dirname(file));
        const volume = pod.volumes?.find((v) => v.name === mount?.name);
        const item = volume?.secret?.items?.find((i) => i.path === path.basename(file));
        const raw = item && secrets.get(volume?.secret?.secretName ?? '')?.[item.key];
        expect({ where, name, readOnly: mount?.readOnly, stored: raw !== undefined }).toEqual({
          where,
          name,
          readOnly: true,
          stored: true,
        });
        const copy = path.join(dir, `${d.metadata.name}-${name}`);
        writeFileSync(copy, Buffer.from(raw as string, 'base64'));
        env[name] = copy;
      }
      // The detect pool keeps its jobs in its own memory and opens no database.
      const memory = program === 'inference' && env.INFERENCE_JOB_STORE === 'memory';
      const missing = requiredVariables(program).filter(
        (v) => !(v in env) && !(`${v}_FILE` in env) && !(memory && v === 'DATABASE_URL'),
      );
      expect({ where, missing }).toEqual({ where, missing: [] });
      const config = loadConfig(SHAPES[program], env) as Record<string, unknown>;

      const ports = Object.fromEntries((c.ports ?? []).map((p) => [p.name, p.containerPort]));
      expect({ where, ports }).toEqual({
        where,
        ports: { http: config[PORT_VARIABLE[program]], metrics: Number(env.METRICS_PORT) },
      });
      expect(c.ports?.every((p) => p.protocol === 'TCP')).toBe(true);
      const probe = (p: string) => ({ path: p, port: 'http', scheme: 'HTTP' });
      expect({ where, startup: c.startupProbe?.httpGet, live: c.livenessProbe?.httpGet }).toEqual({
        where,
        startup: probe('/healthz'),
        live: probe('/healthz'),
      });
      expect({ where, ready: c.readinessProbe?.httpGet }).toEqual({ where, ready: probe('/readyz') });

      // Mounts: a writable /tmp, the identity keys and the secret files read-only, the models claim read-only.
      const mounts = Object.fromEntries((c.volumeMounts ?? []).map((m) => [m.mountPath, m]));
      const volumeOf = (mountPath: string) => pod.volumes?.find((v) => v.name === mounts[mountPath]?.name);
      expect({ where, tmp: Boolean(volumeOf('/tmp')?.emptyDir), ro: mounts['/tmp']?.readOnly }).toEqual({
        where,
        tmp: true,
        ro: undefined,
      });
      expect(mounts['/var/run/vision/identity']?.readOnly).toBe(true);
      expect(volumeOf(env.VISION_IDENTITY_DIR)?.secret?.secretName).toEqual(expect.any(String));
      const wantsModels = program === 'inference' && models !== undefined;
      expect({ where, models: volumeOf('/models')?.persistentVolumeClaim }).toEqual({
        where,
        models: wantsModels ? { claimName: models?.claim, readOnly: true } : undefined,
      });
      if (wantsModels) {
        expect(mounts['/models']?.readOnly).toBe(true);
        expect(env.VISION_MODELS_DIR).toBe('/models');
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return deployments.map(componentOf).sort();
}

/** Every Deployment rolled out: its newest spec observed, every replica updated and available. */
export function checkRolledOut(k: Cluster, ns: string, image?: string) {
  for (const d of k.get(['deployments', '-n', ns])) {
    const s = d.status as { observedGeneration?: number; replicas?: number; updatedReplicas?: number };
    const status = d.status as { availableReplicas?: number; unavailableReplicas?: number };
    const want = (d.spec as { replicas: number }).replicas;
    expect({
      name: d.metadata.name,
      observed: s.observedGeneration,
      replicas: s.replicas,
      updated: s.updatedReplicas,
      available: status.availableReplicas,
    }).toEqual({
      name: d.metadata.name,
      observed: d.metadata.generation,
      replicas: want,
      updated: want,
      available: want,
    });
    if (image)
      expect({ name: d.metadata.name, image: podOf(d).containers[0].image }).toEqual({
        name: d.metadata.name,
        image,
      });
  }
  if (image) {
    // The old pods are gone: every pod of the release runs the new image.
    const pods = k
      .get(['pods', '-n', ns, '-l', 'app.kubernetes.io/name=vision'])
      .filter((p) => componentOf(p) !== 'test');
    for (const p of pods)
      expect({ pod: p.metadata.name, image: (p.spec as unknown as PodSpec).containers[0].image }).toEqual({
        pod: p.metadata.name,
        image,
      });
  }
}
