import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { createLogger, installCrashHandler } from '@vision/shared';
import { startStandalone, type Standalone } from '../../apps/standalone/src/index';
import { callApi } from './api-call';

export const SHARED_DIR = process.env.VISION_SHARED_DIR ?? path.resolve(__dirname, '../../../shared');
export const MEDIA = path.join(SHARED_DIR, 'media');

export interface TestStack {
  kind: 'standalone' | 'distributed';
  url: string;
  /** Set for the standalone stack only. */
  standalone?: Standalone;
  dataDir: string;
  /** Calls the gateway; every answer is validated against docs/openapi.yaml. */
  api(
    method: string,
    urlPath: string,
    init?: { key?: string; headers?: Record<string, string>; body?: RequestInit['body'] },
  ): Promise<ApiResponse>;
  close(opts?: { keepData?: boolean }): Promise<void>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test convenience: bodies are checked against the OpenAPI schema
  body: any;
}

export interface StackOptions {
  /** VISION_API_KEYS value: `key:subject,...`. */
  keys?: string;
  dataDir?: string;
  env?: Record<string, string>;
}

/**
 * The stack the end-to-end suite runs against: E2E_STACK=standalone (default) starts everything in
 * this process; E2E_STACK=distributed uses the separate processes on real servers (see
 * test/helpers/distributed.ts).
 */
export async function startStack(opts: StackOptions = {}): Promise<TestStack> {
  if (process.env.E2E_STACK === 'distributed') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { startDistributedStack } = require('./distributed') as {
      startDistributedStack(o: StackOptions): Promise<TestStack>;
    };
    return startDistributedStack(opts);
  }
  return startStandaloneStack(opts);
}

// The process-wide crash handler, as every service process installs it, on the real process (jest's
// `process` is a copy that Node never emits on), with an exit that records instead of exiting. It is
// installed while a standalone stack is open; closing the last one fails if it was ever reached.
const realProcess = vm.runInThisContext('process') as NodeJS.Process;
const crash = { open: 0, exits: [] as number[], uninstall: () => undefined as void };

function openCrashWatch(): void {
  if (crash.open++ === 0)
    crash.uninstall = installCrashHandler(
      createLogger('e2e', { level: 'fatal' }),
      (code) => crash.exits.push(code),
      realProcess,
    );
}

function closeCrashWatch(): void {
  if (--crash.open > 0) return;
  crash.uninstall();
  const exits = crash.exits.splice(0);
  if (exits.length)
    throw new Error(`the process-wide crash handler was reached ${exits.length} time(s) (exit ${exits[0]})`);
}

/**
 * Starts the whole standalone stack in this process on ephemeral ports, with a temporary data dir
 * (or the given one, to test restarts), the shared models, and the given API keys.
 */
export async function startStandaloneStack(opts: StackOptions = {}): Promise<TestStack> {
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'vision-e2e-'));
  const standalone = await startStandalone({
    ports: 'ephemeral',
    logger: createLogger('e2e', { level: process.env.E2E_LOG_LEVEL ?? 'silent' }),
    env: {
      PATH: process.env.PATH,
      LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'silent',
      VISION_DATA_DIR: dataDir,
      VISION_MODELS_DIR: path.join(SHARED_DIR, 'models'),
      STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
      ...(opts.keys ? { VISION_API_KEYS: opts.keys } : {}),
      ...opts.env,
    },
  });
  const url = standalone.url;
  openCrashWatch();
  return {
    kind: 'standalone',
    url,
    standalone,
    dataDir,
    api: (method, urlPath, init) => callApi(url, method, urlPath, init),
    async close(o = {}) {
      await standalone.close();
      if (!o.keepData && !opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
      closeCrashWatch();
    },
  };
}

/** GET /v1/vision/quota's figures of one kind. */
export interface QuotaFigures {
  limit: number;
  used: number;
  held: number;
  remaining: number;
}

/**
 * `key`'s quota once nothing is held any more: the images service reports a call's charge just after its answer
 * and returns a lease's unspent units once no call has used it for IMAGES_QUOTA_LEASE_IDLE_MS (docs/API.md,
 * "Quota"), so `used` and `held` settle shortly after the calls end. Throws when something is still held after
 * `timeoutMs`.
 */
export async function settledQuota(
  stack: TestStack,
  key: string,
  timeoutMs = 15_000,
): Promise<{ images: QuotaFigures; video_tasks: QuotaFigures }> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await stack.api('GET', '/v1/vision/quota', { key });
    // A key held to a low rate may be told to wait (429 with Retry-After): it waits and reads again.
    const wait = r.status === 429 ? Number(r.headers.get('retry-after') ?? 1) * 1000 : 100;
    if (r.status !== 200 && r.status !== 429) throw new Error(`quota answered ${r.status}`);
    if (r.status === 200 && r.body.images.held === 0 && r.body.video_tasks.held === 0) return r.body;
    if (Date.now() > until) throw new Error(`quota still holds units: ${JSON.stringify(r.body)}`);
    await new Promise((res) => setTimeout(res, wait));
  }
}
