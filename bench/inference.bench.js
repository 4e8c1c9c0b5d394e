/* global performance, fetch, FormData, Blob, setTimeout */
/**
 * Inference backend benchmark. Run after `npm run build` (or `npx tsc -b services/inference/tsconfig.json`):
 *
 *   node bench/inference.bench.js [--reps 30] [--image street_people_car_coco9891.jpg]
 *
 * In one process and one run it measures
 * 1. raw model latency: `session.run` alone (OnnxModel.runRaw) on one preprocessed 416x416 tensor
 *    (5 warm-up runs, then --reps runs, median) -> the raw model limit in frames per second;
 * 2. per-image latency through the backend: POST /internal/v1/detect with that one image (multipart,
 *    signed identity), --reps sequential requests, median; compared with the raw model time
 *    (target: overhead = per-image / raw - 1 under 0.25);
 * 3. sustained file-job throughput: a job on pedestrians_vtest_opencv_10s.mov sampled at its native
 *    10 fps (~105 frames: ffmpeg decode + letterbox + detection + tracking + publishing on the
 *    in-process bus), frames / (time from the first to the last frame); compared with the raw model
 *    fps (target: ratio >= 0.80).
 * Each figure is printed with its ratio to the raw model measured in the same run.
 */
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');

const root = path.resolve(__dirname, '..');
const shared = require(path.join(root, 'packages/shared/dist/index.js'));
const inference = require(path.join(root, 'services/inference/dist/index.js'));

const args = process.argv.slice(2);
const arg = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
};
const reps = Number(arg('reps', '30'));
const imageName = arg('image', 'street_people_car_coco9891.jpg');
const sharedDir = process.env.VISION_SHARED_DIR ?? path.resolve(root, '../shared');
const modelsDir = process.env.VISION_MODELS_DIR ?? path.join(sharedDir, 'models');
const imagePath = path.join(sharedDir, 'media/images', imageName);
const clip = path.join(sharedDir, 'media/videos/pedestrians_vtest_opencv_10s.mov');
const SECRET = 'bench-internal-secret-0123456789';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (v, d = 2) => v.toFixed(d);

async function rawModel() {
  const labels = fs.readFileSync(path.join(modelsDir, 'yolox_nano.labels.txt'), 'utf8').trim().split('\n');
  const model = await inference.OnnxModel.load(path.join(modelsDir, 'yolox_nano.onnx'), {
    decoder: 'yolox',
    labels,
  });
  const prepared = await inference.prepareImage(fs.readFileSync(imagePath), model.inputSize);
  for (let i = 0; i < 5; i++) await model.runRaw(prepared.tensor);
  const times = [];
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    await model.runRaw(prepared.tensor);
    times.push(performance.now() - t);
  }
  await model.close();
  return median(times);
}

async function main() {
  const rawMs = await rawModel();
  const rawFps = 1000 / rawMs;

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'inference-bench-'));
  const logger = shared.createLogger('inference', { level: 'silent' });
  const bus = new shared.InProcessBus({ logger });
  const store = new shared.DirectoryObjectStore(path.join(dataDir, 'objects'));
  await store.put('bench/clip.mov', fs.readFileSync(clip));
  const svc = await inference.start({
    env: {
      VISION_MODELS_DIR: modelsDir,
      INTERNAL_SECRET: SECRET,
      VISION_DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
    },
    bus,
    objectStore: store,
    logger,
    port: 0,
    host: '127.0.0.1',
  });
  try {
    // 2. per image through /detect
    const img = fs.readFileSync(imagePath);
    const post = async () => {
      const form = new FormData();
      form.append('scene_code', 'person_vehicle');
      form.append('files', new Blob([img], { type: 'image/jpeg' }), imageName);
      const res = await fetch(`${svc.url}/internal/v1/detect`, {
        method: 'POST',
        body: form,
        headers: {
          'x-vision-identity': shared.signIdentity(SECRET, { subject: 'bench', requestId: 'bench' }),
        },
      });
      const body = await res.json();
      if (res.status !== 200 || body.results[0].status !== 'succeeded')
        throw new Error(`detect failed: ${JSON.stringify(body)}`);
    };
    for (let i = 0; i < 3; i++) await post();
    const times = [];
    for (let i = 0; i < reps; i++) {
      const t = performance.now();
      await post();
      times.push(performance.now() - t);
    }
    const perImageMs = median(times);

    // 3. sustained file job
    const stamps = [];
    let ended;
    const sub = await bus.subscribe({
      topic: shared.TOPICS.frames,
      group: 'bench',
      handleBatch: async (msgs) => {
        for (const m of msgs) {
          if (m.value.type === 'frame') stamps.push(performance.now());
          else ended = m.value;
        }
      },
    });
    const t0 = performance.now();
    const submit = await fetch(`${svc.url}/internal/v1/jobs`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-vision-identity': shared.signIdentity(SECRET, { subject: 'bench', requestId: 'bench' }),
      },
      body: JSON.stringify({
        job_id: 'bench-job',
        scene_code: 'person_vehicle',
        source: { type: 'object', key: 'bench/clip.mov' },
        sample_fps: 10,
      }),
    });
    if (submit.status !== 201) throw new Error(`job not accepted: ${submit.status}`);
    while (!ended) await new Promise((r) => setTimeout(r, 20));
    const tEnd = performance.now();
    await sub.close();
    if (ended.status !== 'succeeded') throw new Error(`job ended ${ended.status}: ${ended.reason}`);
    const frames = stamps.length;
    const steadyFps = (frames - 1) / ((stamps[frames - 1] - stamps[0]) / 1000);
    const wholeFps = frames / ((tEnd - t0) / 1000);

    const overhead = perImageMs / rawMs - 1;
    console.log(`inference bench (image ${imageName}, reps ${reps}, cpus ${os.cpus().length})`);
    console.log(
      `  raw model (session.run only):   ${fmt(rawMs)} ms/frame = ${fmt(rawFps, 1)} fps   [ratio 1.00, the limit]`,
    );
    console.log(
      `  per image via POST /detect:     ${fmt(perImageMs)} ms  ratio ${fmt(perImageMs / rawMs)} x raw, overhead ${fmt(overhead * 100, 1)}% (target < 25%) ${overhead < 0.25 ? 'OK' : 'MISSED'}`,
    );
    console.log(
      `  file job, ${frames} frames at 10 fps: ${fmt(steadyFps, 1)} fps steady (${fmt(wholeFps, 1)} fps incl. start-up)  ratio ${fmt(steadyFps / rawFps)} of raw (target >= 0.80) ${steadyFps / rawFps >= 0.8 ? 'OK' : 'MISSED'}`,
    );
  } finally {
    await svc.close();
    await bus.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
