/* global performance, fetch, setTimeout */
/**
 * Inference backend benchmark. Run after `npm run build` (or `npx tsc -b services/inference/tsconfig.json`):
 *
 *   node bench/inference.bench.js [--reps 30] [--image street_people_car_coco9891.jpg]
 *
 * In one process and one run it measures
 * 1. the raw model: `session.run` alone (OnnxModel.runRaw) on one prepared 416x416 tensor
 *    (median of --reps runs) -> the raw model limit in frames per second;
 * 2. the raw pipeline on that image (bench/lib/limits.js): decode + letterbox + tensor + `session.run`
 *    in a tight loop, sequential and overlapped;
 * 3. one image through the backend: POST /internal/v1/detect (raw image body, signed identity),
 *    --reps sequential requests, median; target <= 1.3x the sequential raw pipeline;
 * 4. a file job on pedestrians_vtest_opencv_10s.mov sampled at its native 10 fps (~105 frames: ffmpeg
 *    decode + letterbox + detection + tracking + publishing on the in-process bus), frames / (time from
 *    the first to the last frame), after one warm-up run, median of 3 runs; target >= 0.95x the raw
 *    model's fps measured around them. Also prints the CPU time per frame of the raw model and of the job
 *    (its process between the first and last frame, and its ffmpeg): on a machine the model fills, that is
 *    what bounds the job's rate.
 * Ends with `targets: N met, M missed`. Compare figures only within a run: the machine is shared.
 */
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');

const root = path.resolve(__dirname, '..');
const shared = require(path.join(root, 'packages/shared/dist/index.js'));
const inference = require(path.join(root, 'services/inference/dist/index.js'));
const { benchIdentityDir, signerOf } = require('./lib/identity');
const limits = require('./lib/limits');

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
const IDENTITY_DIR = benchIdentityDir();
/** Inference is called by tasks and images: the bench signs as tasks. */
const SIGNER = signerOf(IDENTITY_DIR, 'tasks');
/** Image detection is the images service's call (IDENTITY_ROUTES). */
const DETECT_SIGNER = signerOf(IDENTITY_DIR, 'images');
const JOB_RUNS = 3;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (v, d = 2) => v.toFixed(d);

async function main() {
  const model = await limits.loadModel(modelsDir);
  const image = fs.readFileSync(imagePath);
  // Rounds of the raw limits (two runs of the image each) interleaved with the service's requests.
  const raw = new limits.RawLimits(model, [image, image]);
  await raw.warmUp();

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'inference-bench-'));
  const logger = shared.createLogger('inference', { level: 'silent' });
  const bus = new shared.InProcessBus({ logger });
  const store = new shared.DirectoryObjectStore(path.join(dataDir, 'objects'));
  await store.put('bench/clip.mov', fs.readFileSync(clip));
  const svc = await inference.start({
    env: {
      VISION_MODELS_DIR: modelsDir,
      VISION_IDENTITY_DIR: IDENTITY_DIR,
      ...limits.serviceEnv(),
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
      const res = await fetch(`${svc.url}/internal/v1/detect?scene_code=person_vehicle`, {
        method: 'POST',
        body: img,
        headers: {
          'content-type': 'image/jpeg',
          'x-vision-identity': shared.signIdentity(
            DETECT_SIGNER,
            { subject: 'bench', requestId: 'bench' },
            'inference',
            { method: 'POST', target: '/internal/v1/detect?scene_code=person_vehicle' },
          ),
        },
      });
      const body = await res.json();
      if (res.status !== 200 || body.results[0].status !== 'succeeded')
        throw new Error(`detect failed: ${JSON.stringify(body)}`);
    };
    for (let i = 0; i < 3; i++) await post();
    const times = [];
    for (let i = 0; i < reps; i += 2) {
      await raw.round();
      for (let k = 0; k < 2; k++) {
        const t = performance.now();
        await post();
        times.push(performance.now() - t);
      }
    }
    const perImageMs = median(times);
    const pipe = raw.summary();
    // The file job's limit: the raw model measured just before and just after the job.
    const around = new limits.RawLimits(model, [image, image]);
    await around.warmUp();
    for (let i = 0; i < reps; i += 4) await around.round();

    // 3. sustained file job: one run to warm it up (ffmpeg's first start, the job code's first frames), then
    // JOB_RUNS measured runs, each between rounds of the raw model.
    let stamps = [];
    /** The process's CPU time at each frame's arrival (the steady part, without the job's start-up). */
    let cpuAt = [];
    let ended;
    const sub = await bus.subscribe({
      topic: shared.TOPICS.frames,
      group: 'bench',
      handleBatch: async (msgs) => {
        for (const m of msgs) {
          if (m.value.type === 'frame') {
            stamps.push(performance.now());
            cpuAt.push(process.cpuUsage());
          } else ended = m.value;
        }
      },
    });
    const runJob = async (jobId) => {
      stamps = [];
      cpuAt = [];
      ended = undefined;
      const t0 = performance.now();
      const children0 = limits.childrenCpuMs();
      const submit = await fetch(`${svc.url}/internal/v1/jobs`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-vision-identity': shared.signIdentity(
            SIGNER,
            { subject: 'bench', requestId: 'bench' },
            'inference',
            { method: 'POST', target: '/internal/v1/jobs' },
          ),
        },
        body: JSON.stringify({
          job_id: jobId,
          scene_code: 'person_vehicle',
          source: { type: 'object', key: 'bench/clip.mov' },
          sample_fps: 10,
        }),
      });
      if (submit.status !== 201) throw new Error(`job not accepted: ${submit.status}`);
      while (!ended) await new Promise((r) => setTimeout(r, 20));
      const tEnd = performance.now();
      if (ended.status !== 'succeeded') throw new Error(`job ended ${ended.status}: ${ended.reason}`);
      const n = stamps.length;
      await new Promise((r) => setTimeout(r, 200)); // ffmpeg has exited and been waited for
      const [a, b] = [cpuAt[0], cpuAt[n - 1]];
      return {
        processCpu: (b.user - a.user + b.system - a.system) / 1000 / (n - 1),
        ffmpegCpu: (limits.childrenCpuMs() - children0) / n,
        frames: n,
        steady: (n - 1) / ((stamps[n - 1] - stamps[0]) / 1000),
        whole: n / ((tEnd - t0) / 1000),
      };
    };
    await runJob('bench-warm-up');
    const jobs = [];
    for (let r = 0; r < JOB_RUNS; r++) {
      jobs.push(await runJob(`bench-job-${r}`));
      for (let i = 0; i < reps; i += 4) await around.round();
    }
    await model.close();
    const { model: rawMs, modelCpu: rawCpu } = around.summary();
    const rawFps = 1000 / rawMs;
    await sub.close();
    const frames = jobs[0].frames;
    const steadyFps = median(jobs.map((j) => j.steady));
    const wholeFps = median(jobs.map((j) => j.whole));
    const jobCpu = median(jobs.map((j) => j.processCpu));
    const ffmpegCpu = median(jobs.map((j) => j.ffmpegCpu));

    const [l1, l5, l15] = os.loadavg();
    console.log(
      `inference bench (image ${imageName}, reps ${reps}, cpus ${os.cpus().length}, ` +
        `load average ${fmt(l1)} ${fmt(l5)} ${fmt(l15)})`,
    );
    console.log(`  raw model (session.run only):     ${fmt(pipe.model)} ms/frame beside /detect`);
    console.log(`  raw pipeline sequential:          ${fmt(pipe.sequential)} ms/image`);
    console.log(`  raw pipeline overlapped:          ${fmt(pipe.overlapped)} ms/image`);
    console.log(
      `  one image via POST /detect:       ${fmt(perImageMs)} ms = ${fmt(perImageMs / pipe.model)}x raw model, ` +
        `${fmt(perImageMs / pipe.sequential)}x raw pipeline`,
    );
    console.log(
      `  file job, ${frames} frames at 10 fps, median of ${JOB_RUNS}:  ${fmt(steadyFps, 1)} fps steady (${fmt(wholeFps, 1)} fps incl. start-up); ` +
        `raw model around the job ${fmt(rawMs)} ms/frame = ${fmt(rawFps, 1)} fps`,
    );
    // What bounds the job on a machine whose cores the model already fills: the CPU it spends per frame.
    console.log(
      `  CPU per frame: raw model ${fmt(rawCpu)} ms (${fmt(rawCpu / rawMs)} cores); file job ${fmt(jobCpu)} ms in the ` +
        `process + ${fmt(ffmpegCpu)} ms ffmpeg (${fmt(((jobCpu + ffmpegCpu) * steadyFps) / 1000)} cores at the steady rate)`,
    );
    limits.report([
      {
        name: 'one image via /detect / raw pipeline',
        value: fmt(perImageMs / pipe.sequential),
        limit: '<= 1.3',
        ok: perImageMs / pipe.sequential <= 1.3,
      },
      {
        name: 'file job fps / raw model fps',
        value: fmt(steadyFps / rawFps),
        limit: '>= 0.95',
        ok: steadyFps / rawFps >= 0.95,
      },
    ]);
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
