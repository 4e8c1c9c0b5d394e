/**
 * The tools of the real node cluster's tests (scripts/test-cluster.sh sets the environment they read): kubectl, helm
 * and ctr against the node, reading its objects, and waiting for a condition.
 */
import { spawn, spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';

export const repoRoot = path.resolve(__dirname, '../..');
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

/** An eviction of `pod` through the Eviction API (what a node drain does): kubectl's answer, or its refusal. */
export function evict(namespace: string, pod: string): { ok: boolean; said: string } {
  const eviction = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace } };
  try {
    return {
      ok: true,
      said: run(
        'kubectl',
        ['create', '--raw', `/api/v1/namespaces/${namespace}/pods/${pod}/eviction`, '-f', '-'],
        JSON.stringify(eviction),
      ),
    };
  } catch (err) {
    return { ok: false, said: (err as Error).message };
  }
}
