/** Test wiring: the real quota service, a test-local inference and tasks implementing the internal contracts, and images. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import type { Request } from 'express';
import {
  type Bus,
  type Clock,
  InProcessBus,
  type ObjectStore,
  type Subscription,
  TOPICS,
  type RunningService,
  type SceneCode,
  IDENTITY_HEADER,
  type IdentityCall,
  closeServer,
  createLogger,
  createServiceApp,
  listen,
  overloaded,
  route,
} from '@vision/shared';
import { DirectoryObjectStore } from '@vision/shared/object-store/directory-object-store';
import { start as startQuota } from '@vision/quota';
import { start as startInference } from '@vision/inference';
import { type RunningImages, start as startImages } from '../src/index';
import { identityDir, signFor, verifierOfAll } from '../../../test/helpers/identity';

export const sharedDir = process.env.VISION_SHARED_DIR ?? path.resolve(__dirname, '../../../../shared');
export const mediaPath = (name: string): string => path.join(sharedDir, 'media/images', name);
export const media = (name: string): Buffer => readFileSync(mediaPath(name));
export const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

export const logger = createLogger('images-test', { level: 'silent' });

/** Test-local inference implementing GET /internal/v1/scenes and POST /internal/v1/detect (docs/INTERNAL.md). */
export class FakeInference {
  /** Images (by sha256) for which detect answers 500, as a crashed backend would. */
  readonly poisoned = new Set<string>();
  /** Images (by sha256) that detect refuses as a full backend does: 503 `overloaded`, Retry-After 7. */
  readonly shedding = new Set<string>();
  disabled = new Set<SceneCode>(['fishing']);
  detectCalls = 0;
  /** Runs before each detect answer (to make time pass or change quota while a call is in progress). */
  beforeDetect?: () => Promise<void>;
  private server?: Server;
  url = '';

  async start(): Promise<void> {
    const app = createServiceApp(
      { name: 'inference-fake', audience: 'inference', logger, identity: verifierOfAll() },
      (a) => {
        a.get('/internal/v1/scenes', (_req, res) => {
          const codes: SceneCode[] = ['person_vehicle', 'ship', 'fishing', 'fire_smoke', 'cow_sheep'];
          res.json({
            scenes: codes.map((c) => ({
              scene_code: c,
              enabled: !this.disabled.has(c),
              ...(this.disabled.has(c) ? { reason: 'model not installed' } : {}),
              engine: 'fake',
              labels: ['boat'],
              lower_bound: 0.3,
            })),
          });
        });
        a.post(
          '/internal/v1/detect',
          route(async (req, res) => {
            this.detectCalls += 1;
            const files = await readFiles(req);
            await this.beforeDetect?.();
            // As inference's own detect queue refuses (503 overloaded, Retry-After from the backlog).
            if (files.some((f) => this.shedding.has(sha256(f)))) throw overloaded(7000, 'detect');
            if (files.some((f) => this.poisoned.has(sha256(f)))) {
              res.status(500).json({ error: { code: 'OP-SYS-INTERNAL', message: 'boom', request_id: 'x' } });
              return;
            }
            res.json({
              results: files.map((f, seq) => ({
                seq,
                status: 'succeeded',
                image: { width: 10, height: 10 },
                // A track_id the images service must drop; the score encodes the size so tests can tell images apart.
                objects: [
                  {
                    label: 'boat',
                    score: (f.length % 1000) / 1000,
                    bbox: { format: 'cxcywh_normalized', cx: 0.5, cy: 0.5, width: 0.25, height: 0.25 },
                    track_id: 'should-not-appear',
                  },
                ],
              })),
            });
          }),
        );
      },
    );
    this.server = await listen(app, 0, '127.0.0.1');
    const addr = this.server.address();
    this.url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  }

  async close(): Promise<void> {
    if (this.server) await closeServer(this.server);
  }
}

/** The images of a detect request: one raw image body (what the images service sends) or a multipart form. */
async function readFiles(req: Request): Promise<Buffer[]> {
  if (!String(req.headers['content-type'] ?? '').startsWith('multipart/')) {
    const chunks: Buffer[] = [];
    for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
    return [Buffer.concat(chunks)];
  }
  return new Promise((resolve, reject) => {
    const files: Buffer[] = [];
    const bb = busboy({ headers: req.headers });
    bb.on('file', (_name, stream) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => files.push(Buffer.concat(chunks)));
    });
    bb.on('close', () => resolve(files));
    bb.on('error', reject);
    req.pipe(bb);
  });
}

/**
 * Test-local tasks service: the consumer of `vision.image-calls` (the records the images service
 * publishes through its outbox, docs/INTERNAL.md) over the stack's in-process bus.
 */
export class FakeTasks {
  readonly records = new Map<string, { subject: string; body: Record<string, unknown> }>();
  /** While set, every batch is refused (delivered again later), as a tasks service that is down. */
  down = false;
  /** Messages handled, and those that were not image call records keyed by their task id. */
  received = 0;
  readonly malformed: unknown[] = [];
  private sub?: Subscription;

  async start(bus: Bus): Promise<void> {
    this.sub = await bus.subscribe({
      topic: TOPICS.imageCalls,
      group: 'tasks-fake',
      fromBeginning: true,
      handleBatch: async (messages) => {
        if (this.down) throw new Error('tasks is down');
        for (const m of messages) {
          const { schema, event_id, type, ...body } = m.value as Record<string, unknown>;
          this.received += 1;
          if (
            schema !== 1 ||
            type !== 'image_call.recorded' ||
            typeof event_id !== 'string' ||
            m.key !== body.task_id
          )
            this.malformed.push(m.value);
          else this.records.set(String(body.task_id), { subject: String(body.subject), body });
        }
      },
    });
  }

  async close(): Promise<void> {
    await this.sub?.close();
  }
}

/** A real directory store whose writes fail for keys matching `failKeys` (fault injection, not a mock). */
export class FaultyStore implements ObjectStore {
  readonly kind = 'directory' as const;
  readonly failKeys: RegExp[] = [];
  constructor(readonly inner: DirectoryObjectStore) {}
  put(key: string, body: Readable | Buffer, opts?: { contentType?: string; size?: number }) {
    if (this.failKeys.some((r) => r.test(key))) return Promise.reject(new Error('disk on fire'));
    return this.inner.put(key, body, opts);
  }
  get(key: string) {
    return this.inner.get(key);
  }
  stat(key: string) {
    return this.inner.stat(key);
  }
  delete(keys: string[]) {
    return this.inner.delete(keys);
  }
  listOlderThan(prefix: string, before: Date, limit: number) {
    return this.inner.listOlderThan(prefix, before, limit);
  }
  locate(key: string) {
    return this.inner.locate(key);
  }
  check() {
    return this.inner.check();
  }
}

export interface Stack {
  quota: RunningService;
  /** The fake when the stack was started with `inference: 'fake'`. */
  fake?: FakeInference;
  inferenceUrl: string;
  tasks: FakeTasks;
  images: RunningImages;
  store: FaultyStore;
  dir: string;
  /** Publishes the records in the images outbox now and waits until the fake tasks service has them all. */
  recorded(): Promise<void>;
  close(): Promise<void>;
}

export async function startStack(
  opts: {
    clock?: Clock;
    env?: Record<string, string>;
    inference?: 'real' | 'fake';
    /** Settings of the real inference (its detect queue, for example). */
    inferenceEnv?: Record<string, string>;
  } = {},
): Promise<Stack> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'images-test-'));
  const quota = await startQuota({
    env: {
      VISION_IDENTITY_DIR: identityDir(),
      VISION_DATA_DIR: ':memory:',
      LOG_LEVEL: 'silent',
      QUOTA_OVERRIDES: JSON.stringify({ fifty: { image: 50 }, none: { image: 0 } }),
    },
    port: 0,
    host: '127.0.0.1',
    logger,
  });
  let fake: FakeInference | undefined;
  let real: RunningService | undefined;
  if (opts.inference === 'fake') {
    fake = new FakeInference();
    await fake.start();
  } else {
    real = await startInference({
      env: {
        VISION_IDENTITY_DIR: identityDir(),
        VISION_DATA_DIR: path.join(dir, 'inference'),
        VISION_MODELS_DIR: path.join(sharedDir, 'models'),
        LOG_LEVEL: 'silent',
        ...opts.inferenceEnv,
      },
      port: 0,
      host: '127.0.0.1',
      logger,
      objectStore: new DirectoryObjectStore(path.join(dir, 'objects')),
    });
  }
  const inferenceUrl = fake ? fake.url : (real as RunningService).url;
  const bus = new InProcessBus({ logger, minBackoffMs: 20, maxBackoffMs: 200 });
  const tasks = new FakeTasks();
  await tasks.start(bus);
  const store = new FaultyStore(new DirectoryObjectStore(path.join(dir, 'objects')));
  const images = await startImages({
    env: {
      VISION_IDENTITY_DIR: identityDir(),
      VISION_DATA_DIR: ':memory:',
      LOG_LEVEL: 'silent',
      QUOTA_URL: quota.url,
      INFERENCE_URL: inferenceUrl,
      IMAGES_MAX_PIXELS: '4000000',
      IMAGES_BREAKER_VOLUME_THRESHOLD: '1000',
      // A loaded test machine's slow answer is no failure here (the breaker is tested on its own).
      IMAGES_DETECT_TIMEOUT_MS: '30000',
      IMAGES_BREAKER_HANG_MS: '30000',
      IMAGES_BREAKER_SLOW_MS: '15000',
      IMAGES_JANITOR_INTERVAL_MS: '0',
      // Room for every call of the concurrency and quota race tests to run at once (the admission
      // bound is tested on its own).
      IMAGES_MAX_IN_FLIGHT: '32',
      IMAGES_QUEUE_MAX_WAIT_MS: '60000',
      ...opts.env,
    },
    port: 0,
    host: '127.0.0.1',
    logger,
    clock: opts.clock,
    store,
    bus,
  });
  const recorded = async (): Promise<void> => {
    await images.parts.relay.flush();
    const [{ n }] = (await images.db.knex('outbox').whereNotNull('sent_at').count('* as n')) as {
      n: unknown;
    }[];
    const deadline = Date.now() + 10_000;
    while (tasks.received < Number(n) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    if (tasks.received < Number(n)) throw new Error(`${tasks.received} of ${String(n)} records arrived`);
    if (tasks.malformed.length > 0) throw new Error(`malformed records: ${JSON.stringify(tasks.malformed)}`);
  };
  return {
    quota,
    fake,
    inferenceUrl,
    tasks,
    images,
    store,
    dir,
    recorded,
    close: async () => {
      await images.close();
      await fake?.close();
      await real?.close();
      await tasks.close();
      await bus.close();
      await quota.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A signed identity for `audience` (the images service unless named: the tests also call quota) and the
 * request `call` (an image call unless named).
 */
export function identityHeader(
  subject: string,
  audience = 'images',
  call: IdentityCall = { method: 'POST', target: '/v1/vision/image-detections' },
): string {
  return signFor({ subject, requestId: `req-${subject}` }, audience, call);
}

export { IDENTITY_HEADER };

/** A subject's images quota as quota tells it, once every spend is reported and every idle lease closed. */
export async function imagesQuotaOf(
  stack: Stack,
  subject: string,
): Promise<{ limit: number; used: number; held: number; remaining: number }> {
  await stack.images.parts.leases.closeIdle();
  const r = await fetch(`${stack.quota.url}/v1/vision/quota`, {
    headers: {
      [IDENTITY_HEADER]: identityHeader(subject, 'quota', { method: 'GET', target: '/v1/vision/quota' }),
    },
  });
  if (r.status !== 200) throw new Error(`quota answered ${r.status}`);
  return ((await r.json()) as { images: { limit: number; used: number; held: number; remaining: number } })
    .images;
}
