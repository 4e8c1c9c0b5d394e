/**
 * Test stack for the tasks service: the real quota service, a test-local HTTP fake of the inference
 * internal contract (docs/INTERNAL.md), an in-process bus, PGlite and a directory store under a temp dir.
 */
import { createReadStream, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { type Clock, type Logger, InProcessBus, type RunningService, createLogger } from '@vision/shared';
import { start as startQuota } from '@vision/quota';
import { type TasksService, start } from '../src/index';
import { identityDir, type SignableRequest, signedAs } from '../../../test/helpers/identity';

export const ADMIN_TOKEN = 'admin-token-0123456789abcdef';
export const MEDIA = path.resolve(
  process.env.VISION_SHARED_DIR ?? path.resolve(__dirname, '../../../../shared'),
  'media',
);
export const MP4 = path.join(MEDIA, 'videos/person_bicycle_car_parkinglot_intel.mp4');
export const MOV = path.join(MEDIA, 'videos/pedestrians_vtest_opencv_10s.mov');

export interface FakeJob {
  job_id: string;
  scene_code: string;
  status: 'running' | 'succeeded' | 'failed' | 'stopped';
  reason?: string;
  source: unknown;
  /** The first seq the job was started at (absent: 0). */
  first_seq?: number;
  /** Whether the job keeps its recent frames for the pictures of events (a task with rules). */
  keep_frames?: boolean;
}

/** What the fake backend does; tests change it between calls. */
export interface FakeBehaviour {
  submit: 'accept' | 'reject' | 'over_capacity' | 'hang' | 'hang_after_create' | 'error500';
  stop: 'confirm' | 'error500';
  still?: 'error500';
  disabledScenes: string[];
}

export class FakeInference {
  readonly jobs = new Map<string, FakeJob>();
  /** The latest picture of a job (GET /internal/v1/jobs/:id/still), by job id. */
  readonly stills = new Map<string, { jpeg: Buffer; frameTimeMs: number }>();
  submits = 0;
  /** Reads of jobs' state (GET /internal/v1/jobs and /internal/v1/jobs/:id): the tasks service's polls. */
  polls = 0;
  /** The job grant each submitted job came with (job-grant.ts), by job id. */
  readonly grants = new Map<string, string>();
  behaviour: FakeBehaviour = { submit: 'accept', stop: 'confirm', disabledScenes: ['fire_smoke'] };
  private server?: Server;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private app() {
    const app = express();
    app.use(express.json());
    app.get('/internal/v1/scenes', (_req, res) => {
      const codes = ['person_vehicle', 'ship', 'fishing', 'fire_smoke', 'cow_sheep'];
      res.json({
        scenes: codes.map((c) => ({
          scene_code: c,
          enabled: !this.behaviour.disabledScenes.includes(c),
          ...(this.behaviour.disabledScenes.includes(c) ? { reason: 'model not installed' } : {}),
          engine: 'onnx:test',
          labels: ['person'],
          lower_bound: 0.25,
        })),
      });
    });
    app.post('/internal/v1/jobs', (req, res) => {
      this.submits++;
      const body = req.body as {
        job_id: string;
        scene_code: string;
        source: unknown;
        first_seq?: number;
        grant?: unknown;
        keep_frames?: boolean;
      };
      const existing = this.jobs.get(body.job_id);
      if (existing) return void res.status(200).json({ outcome: 'duplicate', job: existing });
      const b = this.behaviour.submit;
      if (b === 'reject')
        return void res.status(422).json({ outcome: 'rejected', reason: 'source_unusable' });
      if (b === 'over_capacity') return void res.status(429).json({ outcome: 'over_capacity' });
      if (b === 'error500') return void res.status(500).json({ error: 'boom' });
      const job: FakeJob = {
        job_id: body.job_id,
        scene_code: body.scene_code,
        status: 'running',
        source: body.source,
        ...(body.first_seq !== undefined ? { first_seq: body.first_seq } : {}),
        ...(body.keep_frames !== undefined ? { keep_frames: body.keep_frames } : {}),
      };
      if (typeof body.grant === 'string') this.grants.set(body.job_id, body.grant);
      if (b === 'hang') return; // never answers, never creates
      this.jobs.set(job.job_id, job);
      if (b === 'hang_after_create') return;
      res.status(201).json({ outcome: 'accepted', job });
    });
    app.get('/internal/v1/jobs', (req, res) => {
      this.polls++;
      const ids = String(req.query.ids ?? '').split(',');
      res.json({ jobs: ids.map((id) => this.jobs.get(id)).filter(Boolean) });
    });
    app.get('/internal/v1/jobs/:id', (req, res) => {
      this.polls++;
      const job = this.jobs.get(req.params.id);
      if (!job)
        return void res
          .status(404)
          .json({ error: { code: 'OP-NOT-FOUND', message: 'no job', request_id: 'x' } });
      res.json({ job });
    });
    app.get('/internal/v1/jobs/:id/still', (req, res) => {
      const job = this.jobs.get(req.params.id);
      const still = this.stills.get(req.params.id);
      if (this.behaviour.still === 'error500') return void res.status(500).json({ error: 'boom' });
      if (!job || job.status !== 'running' || !still)
        return void res
          .status(404)
          .json({ error: { code: 'OP-NOT-FOUND', message: 'no picture', request_id: 'x' } });
      res.json({
        jpeg_base64: still.jpeg.toString('base64'),
        width: 4,
        height: 3,
        source_width: 4,
        source_height: 3,
        frame_time_ms: still.frameTimeMs,
        captured_at_ms: 1,
      });
    });
    app.post('/internal/v1/jobs/:id/stop', (req, res) => {
      if (this.behaviour.stop === 'error500') return void res.status(500).json({ error: 'boom' });
      const job = this.jobs.get(req.params.id);
      if (!job)
        return void res
          .status(404)
          .json({ error: { code: 'OP-NOT-FOUND', message: 'no job', request_id: 'x' } });
      if (job.status === 'running') job.status = 'stopped';
      res.json({ job });
    });
    return app;
  }

  async listen(port = 0): Promise<void> {
    const server = http.createServer(this.app());
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}

/** Serves real clips over HTTP (what a camera or CDN would). */
export async function startClipServer(): Promise<{ url(name: string): string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const name = decodeURIComponent(String(req.url).split('?')[0].slice(1));
    if (name === 'redirect-to-metadata') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
      return void res.end();
    }
    if (name === 'not-video.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return void res.end('hello, not a video');
    }
    const file = path.join(MEDIA, 'videos', path.basename(name));
    let size: number;
    try {
      size = statSync(file).size;
    } catch {
      res.writeHead(404);
      return void res.end();
    }
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': size });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (name) => `http://127.0.0.1:${port}/${name}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Stack {
  tasks: TasksService;
  quota: RunningService;
  inference: FakeInference;
  bus: InProcessBus;
  dataDir: string;
  env: Record<string, string>;
  http: ReturnType<typeof request>;
  /** The signed identity header for `subject`, made for the tasks service unless `audience` names another. */
  /** A supertest plugin signing the request as `subject` for `audience` (tasks unless named). */
  as(subject: string, audience?: string): (req: SignableRequest) => void;
  objectFiles(): string[];
  restartTasks(clock?: Clock): Promise<void>;
  close(): Promise<void>;
}

export async function startStack(
  opts: { env?: Record<string, string>; clock?: Clock; quotaDaily?: number; logger?: Logger } = {},
): Promise<Stack> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tasks-test-'));
  const bus = new InProcessBus();
  const logger = opts.logger ?? createLogger('test', { level: 'silent' });
  const quota = await startQuota({
    env: {
      VISION_IDENTITY_DIR: identityDir(),
      VISION_DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      QUOTA_VIDEO_DAILY: String(opts.quotaDaily ?? 5),
    },
    bus,
    port: 0,
    host: '127.0.0.1',
    logger,
  });
  const inference = new FakeInference();
  await inference.listen();
  const env: Record<string, string> = {
    VISION_IDENTITY_DIR: identityDir(),
    VISION_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    QUOTA_URL: quota.url,
    INFERENCE_URL: inference.url,
    STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
    TASKS_ADMIN_TOKEN: ADMIN_TOKEN,
    TASKS_POLL_INTERVAL_MS: '200',
    TASKS_RECONCILE_INTERVAL_MS: '200',
    TASKS_STOP_WAIT_MS: '1500',
    // The service's default: on a machine whose cores are all busy, the fake backend's first answer may take
    // over a second, and a submission that times out is answered 202 (resolving), not 201.
    TASKS_BACKEND_TIMEOUT_MS: '5000',
    TASKS_SCENES_CACHE_MS: '60000',
    // The fake backend has no capacity limit of its own (tests that want one set it).
    TASKS_INFERENCE_SLOTS: '1000',
    ...opts.env,
  };
  let tasks = await start({ env, bus, port: 0, clock: opts.clock, logger });
  const stack: Stack = {
    get tasks() {
      return tasks;
    },
    quota,
    inference,
    bus,
    dataDir,
    env,
    get http() {
      return request(tasks.url);
    },
    as: (subject, audience = 'tasks') => signedAs({ subject, requestId: `req-${Math.random()}` }, audience),
    objectFiles: () => listFiles(path.join(dataDir, 'objects')),
    restartTasks: async (clock) => {
      await tasks.close();
      tasks = await start({ env, bus, port: 0, clock: clock ?? opts.clock, logger });
    },
    close: async () => {
      await tasks.close();
      await quota.close();
      await inference.close();
      await bus.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return stack;
}

function listFiles(dir: string): string[] {
  let out: string[] = [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out = out.concat(listFiles(p));
    else out.push(p);
  }
  return out;
}

export async function quotaUsed(stack: Stack, subject: string): Promise<number> {
  const r = await request(stack.quota.url).get('/v1/vision/quota').use(stack.as(subject, 'quota'));
  return (r.body as { video_tasks: { used: number } }).video_tasks.used;
}

export async function waitFor<T>(fn: () => Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
