/* global performance, fetch, FormData, Blob */
/**
 * Image detection benchmark. Run after `npm run build`:
 *
 *   node bench/images.bench.js [--reps 10] [--limit 4]
 *
 * In one process and one run it
 * 1. loads the YOLOX-Nano model (../shared/models, or VISION_MODELS_DIR) with the inference service's
 *    OnnxModel and times `session.run` alone on the preprocessed tensors of the same 10 images that
 *    the batch carries (3 warm-up rounds, then --reps rounds): the raw model latency per image;
 * 2. starts quota, inference and images (standalone adapters, in memory) plus a minimal stand-in for
 *    the tasks record endpoint, and posts the batch of 10 images --reps times (a new Idempotency-Key
 *    each time, scene person_vehicle) straight to the images service with the signed identity header
 *    the gateway sends; per-image latency = request time / 10.
 * 3. posts the batch through a gateway: the one given by --gateway-url URL --api-key KEY, or else a whole
 *    standalone stack (all six services, real inference) that the bench starts in this process.
 *
 * Prints the medians and the ratio per-image service latency / raw model latency against --limit
 * (default 4: decoding, letterboxing, relaying to storage and HTTP may cost at most 3 model runs
 * per image). Latencies are measured from a client in this process; compare them only within a run.
 */
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { randomUUID } = require('node:crypto');

const root = path.resolve(__dirname, '..');
const shared = require(path.join(root, 'packages/shared/dist/index.js'));
const quota = require(path.join(root, 'services/quota/dist/index.js'));
const inference = require(path.join(root, 'services/inference/dist/index.js'));
const images = require(path.join(root, 'services/images/dist/index.js'));

const { parseArgs } = require('./lib/args');

const args = parseArgs(process.argv.slice(2));
const REPS = Number(args.reps ?? 10);
const LIMIT = Number(args.limit ?? 4);
const SECRET = process.env.INTERNAL_SECRET ?? 'bench-secret-0123456789abcdef';
const SHARED_DIR = process.env.VISION_SHARED_DIR ?? path.resolve(root, '../shared');
const MODELS_DIR = process.env.VISION_MODELS_DIR ?? path.join(SHARED_DIR, 'models');
const BATCH = [
  'street_bus_pedestrians_coco2006.jpg',
  'street_doubledecker_bus_coco1584.jpg',
  'street_people_car_coco9891.jpg',
  'vehicles_bicycle_pickup_dog_yolox.jpg',
  'boat_sailboat_kodim06.png',
  'fishing_standin_people_in_boat_kodim14.png',
  'sheep_coco5992.jpg',
  'cattle_cameratrap_crop.jpg',
  'none_bedroom_coco632.jpg',
  'none_brick_facade_kodim01.webp',
].map((n) => ({ name: n, data: fs.readFileSync(path.join(SHARED_DIR, 'media/images', n)) }));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (x) => `${x.toFixed(1)} ms`;

async function rawModel() {
  const labels = inference.parseLabels
    ? inference.parseLabels(fs.readFileSync(path.join(MODELS_DIR, 'yolox_nano.labels.txt'), 'utf8'))
    : fs.readFileSync(path.join(MODELS_DIR, 'yolox_nano.labels.txt'), 'utf8').trim().split('\n');
  const model = await inference.OnnxModel.load(path.join(MODELS_DIR, 'yolox_nano.onnx'), {
    decoder: 'yolox',
    labels,
  });
  const tensors = [];
  for (const img of BATCH) tensors.push((await inference.prepareImage(img.data, model.inputSize)).tensor);
  for (let w = 0; w < 3; w++) for (const t of tensors) await model.runRaw(t);
  const perImage = [];
  for (let r = 0; r < REPS; r++)
    for (const t of tensors) {
      const t0 = performance.now();
      await model.runRaw(t);
      perImage.push(performance.now() - t0);
    }
  await model.close();
  return median(perImage);
}

function form() {
  const f = new FormData();
  f.append('scene_code', 'person_vehicle');
  for (const img of BATCH) f.append('files', new Blob([img.data]), img.name);
  return f;
}

async function postBatches(url, headers) {
  const perImage = [];
  for (let r = -1; r < REPS; r++) {
    const t0 = performance.now();
    const res = await fetch(url, {
      method: 'POST',
      body: form(),
      headers: { ...headers, 'idempotency-key': randomUUID() },
    });
    const body = await res.json();
    const dt = performance.now() - t0;
    if (res.status !== 201) throw new Error(`${url} answered ${res.status}: ${JSON.stringify(body)}`);
    const failed = body.results.filter((x) => x.status !== 'succeeded').length;
    if (failed > 0) throw new Error(`${failed} images failed: ${JSON.stringify(body.results)}`);
    if (r >= 0) perImage.push(dt / BATCH.length); // r = -1 is the warm-up
  }
  return median(perImage);
}

async function main() {
  const logger = shared.createLogger('bench', { level: 'silent' });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'images-bench-'));
  const common = { INTERNAL_SECRET: SECRET, VISION_DATA_DIR: ':memory:', LOG_LEVEL: 'silent' };
  const q = await quota.start({
    env: { ...common, QUOTA_IMAGE_DAILY: '1000000' },
    port: 0,
    host: '127.0.0.1',
    logger,
  });
  const inf = await inference.start({
    env: { ...common, VISION_DATA_DIR: dir, VISION_MODELS_DIR: MODELS_DIR },
    port: 0,
    host: '127.0.0.1',
    logger,
    objectStore: new shared.DirectoryObjectStore(path.join(dir, 'objects')),
  });
  // Minimal tasks stand-in: the image-task record endpoint only.
  const tasksApp = shared.createServiceApp({ name: 'tasks-bench', logger, identitySecret: SECRET }, (app) => {
    app.post('/internal/v1/image-tasks', (req, res) => res.status(201).json(req.body));
  });
  const tasksServer = await shared.listen(tasksApp, 0, '127.0.0.1');
  const tasksUrl = `http://127.0.0.1:${tasksServer.address().port}`;
  const img = await images.start({
    env: {
      ...common,
      QUOTA_URL: q.url,
      TASKS_URL: tasksUrl,
      INFERENCE_URL: inf.url,
      IMAGES_JANITOR_INTERVAL_MS: '0',
    },
    port: 0,
    host: '127.0.0.1',
    logger,
    store: new shared.DirectoryObjectStore(path.join(dir, 'objects')),
  });
  let stack;
  try {
    const raw = await rawModel();
    const identity = shared.signIdentity(SECRET, { subject: 'bench', requestId: 'bench' });
    const direct = await postBatches(`${img.url}/v1/vision/image-detections`, {
      [shared.IDENTITY_HEADER]: identity,
    });
    console.log(`batch of ${BATCH.length} images, ${REPS} rounds`);
    console.log(`raw model (session.run on preprocessed tensor), median per image: ${ms(raw)}`);
    console.log(`images service, median per image:                              ${ms(direct)}`);
    const ratio = direct / raw;
    console.log(
      `ratio service/raw: ${ratio.toFixed(2)} (limit ${LIMIT}) ${ratio <= LIMIT ? 'OK' : 'OVER LIMIT'}`,
    );
    // Through a gateway: the given one, or a whole standalone stack started here (same process, same run).
    let gatewayUrl = args['gateway-url'];
    let apiKey = args['api-key'];
    if (!gatewayUrl) {
      const { startStandalone } = require(path.join(root, 'packages/standalone/dist/index.js'));
      apiKey = 'bench-images-key-0123456789';
      stack = await startStandalone({
        ports: 'ephemeral',
        logger,
        env: {
          PATH: process.env.PATH,
          LOG_LEVEL: 'silent',
          VISION_DATA_DIR: path.join(dir, 'standalone'),
          VISION_MODELS_DIR: MODELS_DIR,
          VISION_API_KEYS: `${apiKey}:bench`,
          QUOTA_IMAGE_DAILY: '1000000',
          GATEWAY_QPS: '1000',
          GATEWAY_BURST: '1000',
        },
      });
      gatewayUrl = stack.url;
    }
    if (gatewayUrl) {
      if (!apiKey) throw new Error('--gateway-url needs --api-key');
      const viaGw = await postBatches(`${gatewayUrl.replace(/\/$/, '')}/v1/vision/image-detections`, {
        authorization: `Bearer ${apiKey}`,
      });
      const r2 = viaGw / raw;
      console.log(`through the gateway, median per image:                         ${ms(viaGw)}`);
      console.log(
        `ratio gateway/raw: ${r2.toFixed(2)} (limit ${LIMIT}) ${r2 <= LIMIT ? 'OK' : 'OVER LIMIT'}`,
      );
    }
  } finally {
    await stack?.close();
    await img.close();
    await new Promise((r) => tasksServer.close(r));
    await inf.close();
    await q.close();
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
