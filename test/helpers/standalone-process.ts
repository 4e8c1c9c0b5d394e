/**
 * `npm start`'s process (apps/standalone/dist/main.js, built by `npm run build`) as a child of a test, on
 * free loopback ports and a fresh data directory. Its stdout and stderr are kept: that is its log.
 * Unlike a stack started inside jest, this process loads its modules through Node's own require, so
 * OpenTelemetry's instrumentation patches them and every span the service really makes is made.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SHARED_DIR } from './stack';
import { freePort } from './stream-servers';

const MAIN = path.resolve(__dirname, '../../apps/standalone/dist/main.js');

export interface StandaloneProcess {
  /** The gateway. */
  url: string;
  /** The tasks service on loopback (its operator routes). */
  tasksUrl: string;
  /** The one metrics endpoint of the six services (METRICS_PORT). */
  metricsUrl: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM, and waits for the exit (the process flushes its spans on the way out). */
  stop(): Promise<void>;
  /** Waits for the process to exit by itself; answers its exit status. */
  exitCode(): Promise<number | null>;
  /** SIGKILL, as a crash: nothing is flushed or closed. Waits for the exit; the data directory stays. */
  kill(): Promise<void>;
}

/**
 * Starts the process with `env` on top of a minimal environment; resolves once it says it is up. Its
 * data directory is a fresh one, removed by stop(), unless `dataDir` names one to keep (restarts).
 */
export async function startStandaloneProcess(
  env: Record<string, string>,
  opts: { dataDir?: string } = {},
): Promise<StandaloneProcess> {
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'vision-child-'));
  // Below the ephemeral range: the gateway listens last, after every migration, seconds from now.
  const [port, metrics, tasks] = [await freePort(), await freePort(), await freePort()];
  const child: ChildProcess = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      METRICS_PORT: String(metrics),
      TASKS_PORT: String(tasks),
      VISION_DATA_DIR: dataDir,
      VISION_MODELS_DIR: path.join(SHARED_DIR, 'models'),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(killer);
    }
    if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  const until = Date.now() + 120_000;
  while (!out.includes(' is up at ')) {
    if (child.exitCode !== null || Date.now() > until) {
      await stop();
      throw new Error(`the standalone process did not start (exit ${child.exitCode}):\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    tasksUrl: `http://127.0.0.1:${tasks}`,
    metricsUrl: `http://127.0.0.1:${metrics}/metrics`,
    output: () => out,
    stop,
    exitCode: () => exited,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
