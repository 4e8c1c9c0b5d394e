/** @jest-environment ./services/inference/test/support/onnx-environment.js */
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import request from 'supertest';
import { streamServer, streamUrls, type StreamServer } from '../../../test/helpers/stream-servers';
import { PixelBudget } from '../src/detect/pixel-budget';
import { startTestInference, type TestInference } from './support/helpers';
import { signedAs } from '../../../test/helpers/identity';

/**
 * Many concurrent batches of huge single-colour JPEGs (about 230 KB each, 40 megapixels once decoded)
 * are decoded a budget's worth at a time (PixelBudget: two images at the cap), and a live job (a real RTSP
 * stream from gst-rtsp-server) keeps running through the flood. CI runs REQUESTS x IMAGES scaled down; the
 * full-size flood is
 *   DECODE_TEST_REQUESTS=16 DECODE_TEST_IMAGES=10 npx jest services/inference/test/decode-bound.test.ts
 * How long the live job waits between frames during a flood is measured by bench/decode-flood.bench.js.
 */
const REQUESTS = Number(process.env.DECODE_TEST_REQUESTS ?? 16);
const IMAGES = Number(process.env.DECODE_TEST_IMAGES ?? 1);
const W = 6000;
const H = 6600;
const MAX_PIXELS = 40_000_000;

const rssMb = () => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) / 1024 : process.memoryUsage().rss / 2 ** 20;
};

describe('PixelBudget', () => {
  it('grants in arrival order within the capacity, and a request larger than it alone', async () => {
    const b = new PixelBudget(100);
    const order: string[] = [];
    const r1 = await b.acquire(60);
    const p2 = b.acquire(60).then((r) => (order.push('second'), r));
    const p3 = b.acquire(10).then((r) => (order.push('third'), r)); // fits, but waits its turn
    const p4 = b.acquire(1000).then((r) => (order.push('huge'), r));
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([]);
    expect(b.usage()).toEqual({ inUse: 60, waiting: 3 });
    r1();
    const [r2, r3] = await Promise.all([p2, p3]);
    expect(order).toEqual(['second', 'third']);
    r2();
    r2(); // a second release gives nothing back twice
    r3();
    (await p4)();
    expect(order).toEqual(['second', 'third', 'huge']);
    expect(b.usage()).toEqual({ inUse: 0, waiting: 0 });
  });
});

describe('POST /internal/v1/detect under a flood of huge images', () => {
  let svc: TestInference;
  let rtsp: StreamServer;
  let jpeg: Buffer;
  let over: Buffer;
  beforeAll(async () => {
    rtsp = await streamServer('rtsp');
    await rtsp.start();
    svc = await startTestInference({
      INFERENCE_MAX_IMAGE_PIXELS: String(MAX_PIXELS),
      // Every request admitted at once: the decode budget alone bounds them, and none is refused for
      // waiting longer than the admission queue allows on a slow machine.
      INFERENCE_DETECT_MAX_IN_FLIGHT: String(REQUESTS),
      STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    const solid = (w: number, h: number) =>
      sharp({ create: { width: w, height: h, channels: 3, background: { r: 200, g: 90, b: 40 } } })
        .jpeg({ quality: 50, optimiseCoding: true })
        .toBuffer();
    jpeg = await solid(W, H);
    over = await solid(7000, 7000);
  }, 120_000);
  afterAll(async () => {
    await svc?.close();
    await rtsp?.stop();
  });

  const detect = (files: Buffer[]) => {
    let r = request(svc.parts.app)
      .post('/internal/v1/detect')
      .use(signedAs({ subject: 'svc-images', requestId: 'req-flood' }, 'inference'))
      .field('scene_code', 'fire_smoke');
    for (const [i, f] of files.entries()) r = r.attach('files', f, `img${i}.jpg`);
    return r;
  };

  it('applies the pixel cap: an image over it fails alone, the others succeed', async () => {
    const res = await detect([over, jpeg]);
    expect(res.status).toBe(200);
    expect(res.body.results[0]).toMatchObject({
      seq: 0,
      status: 'failed',
      reason: 'image exceeds the pixel limit',
    });
    expect(res.body.results[1]).toMatchObject({
      seq: 1,
      status: 'succeeded',
      image: { width: W, height: H },
    });
  }, 120_000);

  it(`decodes ${REQUESTS} concurrent requests of ${IMAGES} ${W}x${H} JPEGs within a bounded memory, while a live job runs`, async () => {
    expect(jpeg.length).toBeLessThan(1_000_000); // a small file...
    const c = svc.collector;
    const job = 'live-during-flood';
    const submitted = await svc.parts.jobs.submit({
      job_id: job,
      scene_code: 'person_vehicle',
      source: { type: 'stream', url: streamUrls(rtsp).rtsp },
      sample_fps: 5,
    });
    expect(submitted.outcome).toBe('accepted');
    await c.waitFor(() => c.frames(job).length >= 3, 60_000, 'live frames before the flood');
    const grants = watchGrants();
    const before = rssMb();
    let peak = before;
    const timer = setInterval(() => (peak = Math.max(peak, rssMb())), 50);
    try {
      const answers = await Promise.all(
        Array.from({ length: REQUESTS }, () => detect(Array.from({ length: IMAGES }, () => jpeg))),
      );
      for (const a of answers) {
        expect(a.status).toBe(200);
        for (const r of a.body.results) expect(r.status).toBe('succeeded');
      }
    } finally {
      clearInterval(timer);
      grants.restore();
    }
    // Every image went through the budget, which never let more than two decode at once, and the flood
    // did queue on it.
    expect(grants.calls).toEqual(Array.from({ length: REQUESTS * IMAGES }, () => W * H));
    expect(grants.peak).toBeLessThanOrEqual(2 * W * H);
    expect(grants.maxWaiting).toBeGreaterThan(0);
    expect(grants.held).toBe(0);
    // The live job outlived the flood: still running, still publishing, and it stops cleanly.
    expect(svc.parts.jobs.get(job)?.status).toBe('running');
    const after = c.frames(job).length;
    await c.waitFor(() => c.frames(job).length >= after + 2, 60_000, 'live frames after the flood');
    expect(svc.parts.jobs.stop(job)?.status).toBe('stopped');
    expect((await c.waitForEnd(job, 10_000)).status).toBe('stopped');
    // ...that decodes to 119 MB of RGB. sharp shrinks a JPEG while it loads it for the model, so the
    // growth here is tens of MB. Decoded whole (the built-in fire detector's path), two at a time reach
    // about +500 MB and all at once about 2 GB: only full-size decodes without a budget fail this bound.
    expect(peak - before).toBeLessThan(1000);
  }, 600_000);
});

/**
 * Records the decode budget's grants (PixelBudget.acquire, wherever the service made its budget): the
 * pixels asked for, the most held at once (counted here, apart from the budget's own bookkeeping), and
 * the most requests seen waiting.
 */
function watchGrants() {
  const original = PixelBudget.prototype.acquire;
  const w = { calls: [] as number[], held: 0, peak: 0, maxWaiting: 0, restore: () => spy.mockRestore() };
  const spy = jest.spyOn(PixelBudget.prototype, 'acquire').mockImplementation(async function (
    this: PixelBudget,
    pixels: number,
  ) {
    w.calls.push(pixels);
    const granted = original.call(this, pixels);
    w.maxWaiting = Math.max(w.maxWaiting, this.usage().waiting);
    const release = await granted;
    w.held += pixels;
    w.peak = Math.max(w.peak, w.held);
    let released = false;
    return () => {
      if (!released) w.held -= pixels;
      released = true;
      release();
    };
  });
  return w;
}
