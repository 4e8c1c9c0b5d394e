/* global performance, fetch */
/**
 * Image detection benchmark. Run after `npm run build`:
 *
 *   node bench/images.bench.js [--reps 5] [--clients 4] [--gateway-url URL --api-key KEY] [--profile FILE]
 *
 * In one process and one run it measures, on the same 10 images (../shared/media/images), in --reps
 * rounds that interleave the limits with the service (the shared machine's load drifts; both see it):
 * 1. the raw model: `session.run` alone on their prepared tensors (bench/lib/limits.js);
 * 2. the raw pipeline: decode + letterbox + tensor + `session.run` in a tight loop, sequential and with
 *    the next image decoding while the model runs (the best of the two is the limit);
 * 3. the service through a gateway (the given one, or a whole standalone stack with real inference that
 *    the bench starts in this process): a batch of the ten images (per image = request time / 10); each
 *    image alone (p50 over all rounds); --clients concurrent clients each sending one batch (images/s).
 * Targets (ratios to the raw pipeline measured above): batch per image <= 1.25x the best raw pipeline;
 * one image p50 <= 1.3x the sequential raw pipeline on the same images; concurrent throughput >= 0.9x
 * the best raw pipeline's. It also prints the CPU time per image (all threads of this process) of the
 * overlapped raw pipeline and of the service under the concurrent clients, with the share of time the main
 * thread was busy then (a stack in this process only), and the request path alone: the p50 of an authenticated
 * read through the gateway that carries no image and writes nothing (GET /api/op/v1/scenes), as a share of
 * what the one-image target leaves beside the pipeline (0.3x the sequential raw pipeline). Request bodies are
 * encoded once, before timing. Ends with `targets: N met, M missed`. Compare figures only within a run: the machine is shared.
 */
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');

const root = path.resolve(__dirname, '..');
const inspector = require('node:inspector/promises');
const { parseArgs } = require('./lib/args');
const { TEN_IMAGES, encodeDetection, postDetection } = require('./lib/detection-calls');
const limits = require('./lib/limits');

const args = parseArgs(process.argv.slice(2));
const REPS = Number(args.reps ?? 5);
const CLIENTS = Number(args.clients ?? 4);
const SHARED_DIR = process.env.VISION_SHARED_DIR ?? path.resolve(root, '../shared');
const MODELS_DIR = process.env.VISION_MODELS_DIR ?? path.join(SHARED_DIR, 'models');
const NAMES = TEN_IMAGES;
const IMAGES = NAMES.map((n) => fs.readFileSync(path.join(SHARED_DIR, 'media/images', n)));
const ms = (x) => `${x.toFixed(1)} ms`;

/** A multipart body encoded once: { body, type }. */
const encode = (indices) => encodeDetection(IMAGES, NAMES, indices);
const post = (url, apiKey, form) => postDetection(url, apiKey, form);

/** One authenticated read through the gateway: no image, no write (the request path's own cost). */
async function read(baseUrl, apiKey) {
  const res = await fetch(`${baseUrl}/api/op/v1/scenes`, { headers: { authorization: `Bearer ${apiKey}` } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`scene list answered ${res.status}`);
}

async function startStack(dir) {
  const { startStandalone } = require(path.join(root, 'apps/standalone/dist/index.js'));
  const shared = require(path.join(root, 'packages/shared/dist/index.js'));
  const apiKey = 'bench-images-key-0123456789';
  const stack = await startStandalone({
    ports: 'ephemeral',
    logger: shared.createLogger('bench', { level: 'silent' }),
    env: {
      PATH: process.env.PATH,
      LOG_LEVEL: 'silent',
      VISION_DATA_DIR: path.join(dir, 'standalone'),
      VISION_MODELS_DIR: MODELS_DIR,
      ...limits.serviceEnv(),
      VISION_API_KEYS: `${apiKey}:bench`,
      QUOTA_IMAGE_DAILY: '1000000',
      GATEWAY_QPS: '1000',
      GATEWAY_BURST: '1000',
      ...(process.env.IMAGES_DETECT_CONCURRENCY
        ? { IMAGES_DETECT_CONCURRENCY: process.env.IMAGES_DETECT_CONCURRENCY }
        : {}),
    },
  });
  return { url: stack.url, apiKey, close: () => stack.close() };
}

async function main() {
  const model = await limits.loadModel(MODELS_DIR);
  const raw = new limits.RawLimits(model, IMAGES);
  await raw.warmUp();

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'images-bench-'));
  const stack = args['gateway-url']
    ? { url: args['gateway-url'].replace(/\/$/, ''), apiKey: args['api-key'], close: async () => undefined }
    : await startStack(dir);
  if (!stack.apiKey) throw new Error('--gateway-url needs --api-key');
  const url = `${stack.url}/v1/vision/image-detections`;
  try {
    const batch = await encode(IMAGES.map((_, i) => i));
    const singles = await Promise.all(IMAGES.map((_, i) => encode([i])));
    const batchTimes = [];
    const singleTimes = [];
    const concurrentIps = [];
    const readTimes = [];
    // CPU time of this process (all threads) and busy share of its main thread while the clients run:
    // meaningful when the stack runs in this process (not with --gateway-url).
    const clientsCpu = [];
    const clientsBusy = [];
    // --profile FILE: a CPU profile of this process's main thread over the measured rounds only.
    const profiler = args.profile ? new inspector.Session() : undefined;
    // Round -1 warms the stack up. Each round: the raw limits, then the same work through the gateway.
    for (let r = -1; r < REPS; r++) {
      if (r === 0 && profiler) {
        profiler.connect();
        await profiler.post('Profiler.enable');
        await profiler.post('Profiler.start');
      }
      if (r >= 0) await raw.round();
      let t0 = performance.now();
      await post(url, stack.apiKey, batch);
      if (r >= 0) batchTimes.push((performance.now() - t0) / IMAGES.length);
      for (let k = 0; k < IMAGES.length; k++) {
        t0 = performance.now();
        await post(url, stack.apiKey, singles[k]);
        if (r >= 0) singleTimes.push({ dt: performance.now() - t0, k });
      }
      for (let k = 0; k < IMAGES.length; k++) {
        t0 = performance.now();
        await read(stack.url, stack.apiKey);
        if (r >= 0) readTimes.push(performance.now() - t0);
      }
      t0 = performance.now();
      const cpu0 = process.cpuUsage();
      const elu0 = performance.eventLoopUtilization();
      await Promise.all(Array.from({ length: CLIENTS }, () => post(url, stack.apiKey, batch)));
      if (r >= 0) {
        concurrentIps.push((CLIENTS * IMAGES.length) / ((performance.now() - t0) / 1000));
        const cpu = process.cpuUsage(cpu0);
        clientsCpu.push((cpu.user + cpu.system) / 1000 / (CLIENTS * IMAGES.length));
        clientsBusy.push(performance.eventLoopUtilization(elu0).utilization);
      }
    }
    if (profiler) {
      const { profile } = await profiler.post('Profiler.stop');
      fs.writeFileSync(args.profile, JSON.stringify(profile));
      profiler.disconnect();
    }
    await model.close();
    const pipe = raw.summary();
    const batchPerImage = limits.median(batchTimes);
    const singleP50 = limits.percentile(
      singleTimes.map((s) => s.dt),
      50,
    );
    // The same mix of images through the sequential raw pipeline.
    const singleLimit = limits.median(singleTimes.map((s) => pipe.perImage[s.k]));
    const ips = limits.median(concurrentIps);
    const pipeIps = 1000 / pipe.best;

    const [l1, l5, l15] = os.loadavg();
    console.log(
      `images bench: ${IMAGES.length} images, ${REPS} rounds, ${CLIENTS} clients; ` +
        `cpus ${os.cpus().length}, load average ${l1.toFixed(2)} ${l5.toFixed(2)} ${l15.toFixed(2)}`,
    );
    console.log(`raw model (session.run only), median per image:       ${ms(pipe.model)}`);
    console.log(`raw pipeline sequential, median per image:            ${ms(pipe.sequential)}`);
    console.log(`raw pipeline overlapped, median per image:            ${ms(pipe.overlapped)}`);
    console.log(`raw pipeline best: ${ms(pipe.best)} per image = ${pipeIps.toFixed(1)} images/s (the limit)`);
    console.log(
      `gateway, batch of ${IMAGES.length}, median per image:             ${ms(batchPerImage)}  ` +
        `= ${(batchPerImage / pipe.model).toFixed(2)}x raw model`,
    );
    console.log(
      `gateway, one image per request, p50:                 ${ms(singleP50)}  ` +
        `(raw pipeline on the same images ${ms(singleLimit)})`,
    );
    console.log(
      `gateway, ${CLIENTS} concurrent clients sending batches: ${ips.toFixed(1)} images/s (median of rounds)`,
    );
    // What the one-image target leaves beside the sequential pipeline, and how much of it one read through the
    // gateway takes (the image call makes that hop, and four more inside: quota twice, inference, tasks).
    const readP50 = limits.percentile(readTimes, 50);
    const slack = 0.3 * singleLimit;
    console.log(
      `gateway, one read without image or write, p50:        ${ms(readP50)}  ` +
        `(${((100 * readP50) / slack).toFixed(0)} % of the ${ms(slack)} the one-image target leaves beside the pipeline)`,
    );
    if (!args['gateway-url'])
      console.log(
        `CPU time per image (all threads): raw pipeline overlapped ${ms(pipe.overlappedCpu)}, ` +
          `service under ${CLIENTS} clients ${ms(limits.median(clientsCpu))} ` +
          `(main thread busy ${(100 * limits.median(clientsBusy)).toFixed(0)} %)`,
      );
    limits.report([
      {
        name: 'batch per image / raw pipeline',
        value: (batchPerImage / pipe.best).toFixed(2),
        limit: '<= 1.25',
        ok: batchPerImage / pipe.best <= 1.25,
      },
      {
        name: 'one image p50 / raw pipeline',
        value: (singleP50 / singleLimit).toFixed(2),
        limit: '<= 1.3',
        ok: singleP50 / singleLimit <= 1.3,
      },
      {
        name: `${CLIENTS} clients throughput / raw pipeline`,
        value: (ips / pipeIps).toFixed(2),
        limit: '>= 0.9',
        ok: ips / pipeIps >= 0.9,
      },
    ]);
  } finally {
    await stack.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
