/**
 * A kwok cluster for the chart tests (scripts/kube/cluster.sh, held while the test runs and deleted when its
 * standard input closes), and kubectl/helm against it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './deploy-support';

export const kubeDir = process.env.VISION_KUBE_DIR ?? path.join(os.homedir(), '.cache/vision-kube');
export const kubeBin = path.join(kubeDir, 'bin');
export const crdFiles = ['servicemonitors', 'prometheusrules'].map((n) =>
  path.join(kubeDir, 'crds', `monitoring.coreos.com_${n}.yaml`),
);
/** The Gateway API CRDs, standard channel (scripts/kube/install.sh; `.complete` names their version). */
export const gatewayApiCrdDir = path.join(kubeDir, 'crds/gateway-api');

/** What scripts/kube/install.sh provides that is missing here (empty: the cluster can run). */
export function missingKubeParts(): string[] {
  const bins = [
    'etcd',
    'kube-apiserver',
    'kube-controller-manager',
    'kube-scheduler',
    'kubectl',
    'kwok',
    'kwokctl',
  ];
  return [
    ...bins.map((b) => path.join(kubeBin, b)),
    ...crdFiles,
    path.join(gatewayApiCrdDir, '.complete'),
  ].filter((f) => !existsSync(f));
}

export type Obj = Record<string, unknown>;
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: Obj;
  status?: Obj;
  data?: Record<string, string>;
}

export interface Cluster {
  /** Runs kubectl or helm against the cluster; throws with its output unless it exits 0. */
  run(tool: 'kubectl' | 'helm', args: string[], input?: string): string;
  /** `kubectl get ... -o json` items (or the one object). */
  get(args: string[]): KubeObject[];
  logTail(): string;
  stop(): Promise<void>;
}

export async function startCluster(helm: string): Promise<Cluster> {
  const work = mkdtempSync(path.join(os.tmpdir(), 'vision-kube-test-'));
  const logFile = path.join(work, 'cluster.log');
  const child: ChildProcess = spawn('bash', [path.join(repoRoot, 'scripts/kube/cluster.sh')], {
    cwd: repoRoot,
    stdio: ['pipe', 'pipe', openSync(logFile, 'a')],
  });
  const logTail = () => {
    try {
      return readFileSync(logFile, 'utf8').slice(-4000);
    } catch {
      return '';
    }
  };
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kubeconfig = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no cluster within 4 minutes:\n${logTail()}`)), 240_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const m = /^KUBECONFIG=(.+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1].trim());
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`scripts/kube/cluster.sh exited ${code}:\n${logTail()}`));
    });
  });
  const env = {
    ...process.env,
    KUBECONFIG: kubeconfig,
    PATH: `${kubeBin}${path.delimiter}${process.env.PATH ?? ''}`,
    HELM_CACHE_HOME: path.join(work, 'helm/cache'),
    HELM_CONFIG_HOME: path.join(work, 'helm/config'),
    HELM_DATA_HOME: path.join(work, 'helm/data'),
  };
  const run = (tool: 'kubectl' | 'helm', args: string[], input?: string) => {
    const bin = tool === 'helm' ? helm : path.join(kubeBin, 'kubectl');
    const r = spawnSync(bin, args, { cwd: repoRoot, env, input, encoding: 'utf8', maxBuffer: 256 << 20 });
    if (r.status !== 0)
      throw new Error(`${tool} ${args.join(' ')} exited ${r.status}:\n${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  return {
    run,
    get(args) {
      const parsed = JSON.parse(run('kubectl', ['get', ...args, '-o', 'json'])) as KubeObject & {
        items?: KubeObject[];
      };
      return parsed.items ?? [parsed];
    },
    logTail,
    async stop() {
      child.stdin?.end();
      const timeout = new Promise<void>((resolve) => setTimeout(resolve, 60_000).unref());
      await Promise.race([exited, timeout]);
      if (child.exitCode === null) child.kill('SIGTERM');
      rmSync(work, { recursive: true, force: true });
    },
  };
}

/** Polls `check` (which throws while not yet true) until it passes or `ms` runs out; rethrows the last error. */
export async function eventually<T>(check: () => T, ms = 90_000, every = 1000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      return check();
    } catch (err) {
      if (Date.now() > end) throw err;
      await new Promise((resolve) => setTimeout(resolve, every));
    }
  }
}
