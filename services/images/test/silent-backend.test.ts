/**
 * An inference backend that accepts connections and never answers, or answers only after 10 s: image
 * calls made one at a time meet 503 OP-TASK-BREAKER-OPEN within a few calls, no call waits longer than
 * its bound (docs/OVERLOAD.md, "The breaker around inference": one detect timeout), and once the backend
 * answers again the first call after the reset time is the half-open trial, served, and closes the breaker
 * (a refresh of a stale scene list does not take the trial from it). A service that never fetched the
 * scene list opens the breaker on its first call's wait, the hang bound.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { IDENTITY_HEADER, identityHeader, media, startStack, type Stack } from './harness';

jest.setTimeout(120_000);

/** The slow threshold's floor: once detect is measured (a few ms here), its timeout is twice this. */
const SLOW_MS = 1500;
/**
 * Room for a loaded test machine: a call slower than its bound (one detect timeout) by this much fails the
 * test. Less than the bound itself, so that a call that waited two timeouts (the scene list's, then the
 * detect's) fails it too.
 */
const MARGIN_MS = 2000;

/** Inference silent this long while a call waits opens the breaker; a kind not measured yet times out then. */
const HANG_MS = 3000;

const ENV = {
  IMAGES_BREAKER_SLOW_MS: String(SLOW_MS),
  IMAGES_BREAKER_HANG_MS: String(HANG_MS),
  IMAGES_BREAKER_VOLUME_THRESHOLD: '3',
  IMAGES_BREAKER_WINDOW: '10',
  IMAGES_BREAKER_RESET_MS: '1000',
  // Every call asks for the scene list again: the refresh must not add to the call's wait.
  IMAGES_SCENE_CACHE_MS: '0',
};

type Mode = 'answer' | 'silent' | 'late';

/** A backend at the socket level: answers, accepts and never answers, or answers after 10 s. */
class Backend {
  mode: Mode = 'answer';
  url = '';
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly server = http.createServer((req, res) => {
    const mode = this.mode;
    if (mode === 'silent') return;
    req.resume();
    req.on('end', () => {
      if (mode === 'answer') return answer(req.url ?? '', res);
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        answer(req.url ?? '', res);
      }, 10_000);
      this.timers.add(timer);
    });
  });

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const addr = this.server.address();
    this.url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function answer(url: string, res: http.ServerResponse): void {
  if (res.destroyed) return;
  const body = url.startsWith('/internal/v1/scenes')
    ? {
        scenes: [
          { scene_code: 'cow_sheep', enabled: true, engine: 'fake', labels: ['sheep'], lower_bound: 0.3 },
        ],
      }
    : { results: [{ seq: 0, status: 'succeeded', image: { width: 10, height: 10 }, objects: [] }] };
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const IMAGE = media('sheep_coco5992.jpg');

describe.each<[string, Mode]>([
  ['accepts and never answers', 'silent'],
  ['answers after 10 s', 'late'],
])('an inference backend that %s', (_name, failing) => {
  let stack: Stack;
  let backend: Backend;
  beforeAll(async () => {
    backend = new Backend();
    await backend.start();
    stack = await startStack({ inference: 'fake', env: { ...ENV, INFERENCE_URL: backend.url } });
  });
  afterAll(async () => {
    await stack?.close();
    await backend?.close();
  });

  /** One image call of `subject`: its answer and how long it took. */
  async function call(subject: string): Promise<{ r: request.Response; ms: number }> {
    const started = Date.now();
    const r = await request(stack.images.url)
      .post('/v1/vision/image-detections')
      .set(IDENTITY_HEADER, identityHeader(subject))
      .set('Idempotency-Key', randomUUID())
      .field('scene_code', 'cow_sheep')
      .attach('files', IMAGE, 'sheep.jpg');
    return { r, ms: Date.now() - started };
  }

  /** Resolves once the breaker lets a probe through (polls its state). */
  async function halfOpen(): Promise<void> {
    const until = Date.now() + 30_000;
    while (stack.images.parts.inference.isOpen() && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 20));
  }

  it('opens the breaker within a few calls, each within its bound, and closes it after the probe', async () => {
    const subject = `silent-${failing}`;
    // Calls that answer: the service measures how long detect and the scene list take.
    for (let i = 0; i < 6; i++) expect((await call(subject)).r.status).toBe(201);
    // The bound of a call (docs/OVERLOAD.md): one detect timeout, now twice the slow floor.
    const bound = stack.images.parts.inference.timeoutMs('detect');
    expect(bound).toBe(2 * SLOW_MS);

    backend.mode = failing;
    const seen: number[] = [];
    let open: request.Response | undefined;
    for (let i = 0; i < 6 && !open; i++) {
      const { r, ms } = await call(subject);
      expect(ms).toBeLessThan(bound + MARGIN_MS);
      seen.push(r.status);
      if (r.body?.error?.code === 'OP-TASK-BREAKER-OPEN') open = r;
      // Until it opens, the image fails (its call answered, nothing charged for it).
      else expect(r.body.results[0].error_code).toBe('OP-TASK-UPSTREAM-DOWN');
    }
    expect(open?.status).toBe(503);
    expect(open?.body.error.details.reason).toBe('breaker_open');
    expect(Number(open?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // It opens on the volume's failures in a row (3; the scene list's refreshes that time out count too):
    // at most three calls failed before one was refused.
    expect(seen.length).toBeLessThanOrEqual(4);

    // Open: refused at once, without a call to the backend.
    const refused = await call(subject);
    expect(refused.r.status).toBe(503);
    expect(refused.r.body.error.code).toBe('OP-TASK-BREAKER-OPEN');
    expect(refused.ms).toBeLessThan(MARGIN_MS);

    // The backend answers again: after the reset time the first call is the trial, served, and it closes
    // the breaker (the scene list's copy is stale: its refresh must not take the trial).
    backend.mode = 'answer';
    await halfOpen();
    const { r: served, ms } = await call(subject);
    expect(ms).toBeLessThan(bound + MARGIN_MS);
    expect([served.status, served.body.error?.code]).toEqual([201, undefined]);
    expect(served.body.results[0].status).toBe('succeeded');
    expect(stack.images.parts.inference.state()).toBe('closed');
  });
});

describe('an inference backend silent before the service ever fetched the scene list', () => {
  let stack: Stack;
  let backend: Backend;
  beforeAll(async () => {
    backend = new Backend();
    backend.mode = 'silent';
    await backend.start();
    stack = await startStack({ inference: 'fake', env: { ...ENV, INFERENCE_URL: backend.url } });
  });
  afterAll(async () => {
    await stack?.close();
    await backend?.close();
  });

  it('opens the breaker on the first call, which waits the hang bound, not the longest timeout', async () => {
    const started = Date.now();
    const first = await request(stack.images.url)
      .post('/v1/vision/image-detections')
      .set(IDENTITY_HEADER, identityHeader('never-fetched'))
      .set('Idempotency-Key', randomUUID())
      .field('scene_code', 'cow_sheep')
      .attach('files', IMAGE, 'sheep.jpg');
    const waited = Date.now() - started;
    // The scene list is not measured yet: its fetch times out at the hang bound, and its silence opens the breaker.
    expect(first.status).toBe(503);
    expect(waited).toBeLessThan(HANG_MS + MARGIN_MS);
    expect(stack.images.parts.inference.state()).toBe('open');
    const next = await request(stack.images.url)
      .post('/v1/vision/image-detections')
      .set(IDENTITY_HEADER, identityHeader('never-fetched'))
      .set('Idempotency-Key', randomUUID())
      .field('scene_code', 'cow_sheep')
      .attach('files', IMAGE, 'sheep.jpg');
    expect([next.status, next.body.error.code]).toEqual([503, 'OP-TASK-BREAKER-OPEN']);
  });
});
