/**
 * Evidence benchmark: what the pictures of events cost (docs/EVIDENCE.md), against the detection of a
 * frame measured in the same run. Run after `npx tsc -b tsconfig.build.json`:
 *
 *   node bench/evidence.bench.js [--rounds 9] [--pictures 40] [--image street_people_car_coco9891.jpg]
 *
 * In one process, in --rounds rounds that interleave the parts (the shared machine's load drifts; all see it):
 * 1. detection: `session.run` of the COCO model (../shared/models/yolox_nano.onnx, the service's session
 *    settings) on the prepared image (bench/lib/limits.js), its CPU time per frame (all threads);
 * 2. the ring: FrameRing.hold + put of a decoded frame (services/inference/dist/jobs/frame-ring.js), what every
 *    frame of a task with zones or lines costs, CPU per frame;
 * 3. one picture, end to end: renderPicture (the frame with a person's box drawn and its crop, as JPEG), both
 *    JPEGs to base64 and back (the internal hop's JSON), and both put in the directory object store, CPU per
 *    picture (what inference and results spend together for one event).
 * Targets, CPU against CPU (medians over the rounds):
 * - at 10 events a second on an inference instance that detects at its capacity (its sessions busy, as
 *   bench/live.bench.js loads it: the model's frames per second times its CPU per frame), the pictures' CPU per
 *   second, and the ring's for every frame, / the detection's CPU per second <= 2 %;
 * - ring memory of a live job, 16:9 stream, default INFERENCE_FRAME_RING / the inference pod's memory request
 *   (1 GiB, charts/vision/values.yaml) <= 5 %.
 * 4. the design weighed against 3: the clean frame alone captured for an event (one JPEG, one PUT), the box and the
 *    crop made when the picture is first read, CPU per event at capture.
 * Also prints (information) each picture's CPU against one frame's detection, the share on one camera sampled at
 * 5 frames a second, the object-store bytes and PUTs per event and per hour of a busy camera, and what a file task's
 * frame that left the ring costs to decode again from its upload (services/inference/dist/jobs/frame-redecode.js,
 * on ../shared's 10 s pedestrian clip at 5 frames a second): one frame 9.4 s into the clip asked alone, and eight
 * frames of one step asked together, their wall time and CPU (ffmpeg's, from /proc, and this process's).
 * With --best-shots FILE (the --json of bench/evidence-clips.bench.js, run on the same build), also prints
 * (information) what the tracks' best shots of each clip cost: their pictures per frame with one evaluation step a
 * frame (the most: a live stream's steps are that small), against one camera's detection and against an instance
 * at capacity whose every camera is like that clip.
 * Ends with `targets: N met, M missed`. Compare figures only within a run: the machine is shared.
 */
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { parseArgs } = require('./lib/args');
const limits = require('./lib/limits');
const { report } = require('./lib/targets');

const root = path.resolve(__dirname, '..');
const { FrameRing } = require(path.join(root, 'services/inference/dist/jobs/frame-ring.js'));
const { FrameRedecoder } = require(path.join(root, 'services/inference/dist/jobs/frame-redecode.js'));
const { renderPicture } = require(path.join(root, 'services/inference/dist/jobs/frame-picture.js'));
const { interleaveGbr, JPEG_QUALITY } = require(
  path.join(root, 'services/inference/dist/jobs/latest-still.js'),
);
const { loadInferenceConfig } = require(path.join(root, 'services/inference/dist/index.js'));
const { DirectoryObjectStore } = require(path.join(root, 'packages/shared/dist/index.js'));
const sharp = require(require.resolve('sharp', { paths: [path.join(root, 'services/inference')] }));

const args = parseArgs(process.argv.slice(2));
const ROUNDS = Number(args.rounds ?? 9);
const PICTURES = Number(args.pictures ?? 40);
const IMAGE = args.image ?? 'street_people_car_coco9891.jpg';
const SHARED_DIR = process.env.VISION_SHARED_DIR ?? path.resolve(root, '../shared');
const MODELS_DIR = process.env.VISION_MODELS_DIR ?? path.join(SHARED_DIR, 'models');
const EVENTS_PER_S = 10;
const SAMPLE_FPS = 5;
const POD_MEMORY = 1024 * 1024 * 1024;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const cpuMs = (f) => {
  const c0 = process.cpuUsage();
  const out = f();
  const c = process.cpuUsage(c0);
  return { out, ms: (c.user + c.system) / 1000 };
};
const cpuMsAsync = async (f) => {
  const c0 = process.cpuUsage();
  await f();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
};

/** CPU ms of this process's children that have ended (/proc/self/stat: cutime + cstime, in clock ticks). */
const childCpuMs = () => {
  const f = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(f[13]) + Number(f[14])) * 10; // 100 ticks a second
};

/** A file task's frames decoded again: `seqs` asked together, wall ms and CPU ms (ffmpeg's and this process's). */
async function redecodeCost(redecoder, source, seqs) {
  const [c0, k0, t0] = [process.cpuUsage(), childCpuMs(), performance.now()];
  const frames = await Promise.all(seqs.map((seq) => redecoder.frame('bench', source, seq)));
  if (frames.some((f) => !f)) throw new Error('a frame was not decoded again');
  const wall = performance.now() - t0;
  const own = process.cpuUsage(c0);
  return { wall, cpu: childCpuMs() - k0 + (own.user + own.system) / 1000 };
}

/** A decoded frame as ffmpeg hands it to a job: the picture letterboxed into size x size G, B, R planes. */
async function decodedFrame(file, size, width, height) {
  const r = Math.min(size / width, size / height);
  const w = Math.round(width * r);
  const h = Math.round(height * r);
  const rgb = await sharp(file).resize(w, h, { fit: 'fill' }).removeAlpha().raw().toBuffer();
  const plane = size * size;
  const planes = Buffer.alloc(3 * plane, 114);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const i = (y * w + x) * 3;
      const o = y * size + x;
      planes[o] = rgb[i + 1];
      planes[plane + o] = rgb[i + 2];
      planes[2 * plane + o] = rgb[i];
    }
  return { planes, ptsMs: 0, width, height, capturedAt: 0 };
}

async function main() {
  const image = fs.readFileSync(path.join(SHARED_DIR, 'media/images', IMAGE));
  const model = await limits.loadModel(MODELS_DIR);
  const raw = new limits.RawLimits(model, [image]);
  await raw.warmUp();
  const size = model.inputSize;
  const ringFrames = loadInferenceConfig({}).INFERENCE_FRAME_RING;
  const wide = await decodedFrame(image, size, 1920, 1080);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evidence-bench-'));
  const store = new DirectoryObjectStore(dir);

  // Memory of a live job's ring: full, at 16:9 and 4:3.
  const memory = {};
  for (const [name, [w, h]] of Object.entries({ '16:9': [1920, 1080], '4:3': [640, 480] })) {
    const ring = new FrameRing(ringFrames, size);
    ring.arm();
    const f = name === '16:9' ? wide : await decodedFrame(image, size, w, h);
    for (let seq = 0; seq < ringFrames + 8; seq++) ring.put(seq, seq * 200, ring.hold(f));
    memory[name] = ring.bytes;
  }

  const ring = new FrameRing(ringFrames, size);
  ring.arm();
  let seq = 0;
  const hold = () => ring.put(seq, seq++ * 200, ring.hold(wide));
  for (let i = 0; i < 50; i++) hold();
  const person = { box: [0.42, 0.3, 0.52, 0.75] };
  let jpegBytes = 0;
  let cropBytes = 0;
  const picture = async (i) => {
    const p = await renderPicture(ring.get(seq - 1), person);
    const back = [p.jpeg, p.crop].map((b) => Buffer.from(b.toString('base64'), 'base64'));
    await store.put(`evidence/t/events/${i}.crop.jpg`, back[1]);
    await store.put(`evidence/t/events/${i}.jpg`, back[0]);
    jpegBytes = p.jpeg.length;
    cropBytes = p.crop.length;
  };
  for (let i = 0; i < 5; i++) await picture(i);
  // The weighed design: at capture only the clean frame, as the picture's JPEG is made (one encode, one PUT).
  const cleanFrame = async (i) => {
    const f = ring.get(seq - 1);
    const rgb = interleaveGbr(f.planes, f.width * f.height, f.width, f.width, f.height);
    const jpeg = await sharp(rgb, { raw: { width: f.width, height: f.height, channels: 3 } })
      .jpeg({ quality: JPEG_QUALITY })
      .toBuffer();
    await store.put(`evidence/t/frames/${i}.jpg`, Buffer.from(jpeg.toString('base64'), 'base64'));
  };
  for (let i = 0; i < 5; i++) await cleanFrame(i);

  const holdCpu = [];
  const pictureCpu = [];
  const cleanCpu = [];
  for (let r = 0; r < ROUNDS; r++) {
    await raw.modelRound();
    holdCpu.push(
      cpuMs(() => {
        for (let i = 0; i < 100; i++) hold();
      }).ms / 100,
    );
    pictureCpu.push(
      (await cpuMsAsync(async () => {
        for (let i = 0; i < PICTURES; i++) await picture(i);
      })) / PICTURES,
    );
    cleanCpu.push(
      (await cpuMsAsync(async () => {
        for (let i = 0; i < PICTURES; i++) await cleanFrame(i);
      })) / PICTURES,
    );
  }
  fs.rmSync(dir, { recursive: true, force: true });

  const redecoder = new FrameRedecoder({
    ffmpegPath: process.env.FFMPEG_PATH ?? 'ffmpeg',
    logger: { warn: (o, m) => console.error(m, o) },
    concurrency: 1,
    timeoutMs: 30_000,
  });
  const clip = path.join(SHARED_DIR, 'media/videos/pedestrians_vtest_opencv_10s.mov');
  const source = {
    locate: async () => ({ kind: 'file', input: clip, live: false }),
    sampleFps: SAMPLE_FPS,
    size,
    first: { seq: 0, timeMs: 0 },
  };
  const alone = [];
  const step = [];
  for (let r = 0; r < ROUNDS; r++) {
    alone.push(await redecodeCost(redecoder, source, [47]));
    step.push(await redecodeCost(redecoder, source, [40, 41, 42, 43, 44, 45, 46, 47]));
  }

  const s = raw.summary();
  const detectCpu = Number.isNaN(s.modelCpu) ? s.model : s.modelCpu;
  const hold_ms = median(holdCpu);
  const picture_ms = median(pictureCpu);
  // The instance at capacity: 1000 / s.model frames a second (its sessions' throughput), each detectCpu of CPU.
  const fps = 1000 / s.model;
  const share = (EVENTS_PER_S * picture_ms + fps * hold_ms) / (fps * detectCpu);
  const oneCamera = (EVENTS_PER_S * picture_ms + SAMPLE_FPS * hold_ms) / (SAMPLE_FPS * detectCpu);
  const clean_ms = median(cleanCpu);
  const cleanShare = (EVENTS_PER_S * clean_ms + fps * hold_ms) / (fps * detectCpu);
  const cleanOneCamera = (EVENTS_PER_S * clean_ms + SAMPLE_FPS * hold_ms) / (SAMPLE_FPS * detectCpu);
  const perEvent = jpegBytes + cropBytes;
  const hourly = (perS) => `${((perS * 3600 * perEvent) / 1e9).toFixed(2)} GB and ${perS * 3600 * 2} PUTs`;
  console.log(
    `evidence bench (image ${IMAGE}, model input ${size}, ${ROUNDS} rounds, cpus ${os.cpus().length}, load average ${os
      .loadavg()
      .map((v) => v.toFixed(2))
      .join(' ')})`,
  );
  console.log(`  detection (session.run, CPU):          ${detectCpu.toFixed(2)} ms/frame`);
  console.log(
    `  ring hold + put (CPU):                 ${(hold_ms * 1000).toFixed(0)} us/frame = ${((hold_ms / detectCpu) * 100).toFixed(2)} % of a frame's detection`,
  );
  console.log(
    `  one picture: render, base64, 2 PUTs:   ${picture_ms.toFixed(2)} ms = ${((picture_ms / detectCpu) * 100).toFixed(1)} % of a frame's detection`,
  );
  console.log(
    `  at ${EVENTS_PER_S} events/s, instance at capacity (${fps.toFixed(0)} fps): ${(share * 100).toFixed(2)} % of its detection's CPU`,
  );
  console.log(
    `  at ${EVENTS_PER_S} events/s, one camera at ${SAMPLE_FPS} fps: ${(oneCamera * 100).toFixed(1)} % of its detection's CPU`,
  );
  console.log(
    `  weighed: the clean frame alone (1 JPEG, 1 PUT): ${clean_ms.toFixed(2)} ms = ${((clean_ms / detectCpu) * 100).toFixed(1)} % of a frame's detection; ` +
      `at ${EVENTS_PER_S} events/s ${(cleanShare * 100).toFixed(2)} % at capacity, ${(cleanOneCamera * 100).toFixed(1)} % on one camera`,
  );
  for (const [k, v] of Object.entries(memory))
    console.log(`  ring of ${ringFrames} frames, ${k} stream:       ${(v / 1e6).toFixed(1)} MB per live job`);
  console.log(`  object store per event: 2 PUTs, ${jpegBytes} + ${cropBytes} bytes (frame + crop)`);
  console.log(
    `  per hour of a camera at 1 event/s: ${hourly(1)}; at ${EVENTS_PER_S} events/s: ${hourly(EVENTS_PER_S)}`,
  );
  for (const [what, runs, n] of [
    ['one frame decoded again, alone', alone, 1],
    ['8 frames of one step decoded again', step, 8],
  ]) {
    const wall = median(runs.map((x) => x.wall));
    const cpu = median(runs.map((x) => x.cpu));
    console.log(
      `  ${what}: ${wall.toFixed(0)} ms wall, ${cpu.toFixed(0)} ms CPU = ${(cpu / n / detectCpu).toFixed(1)} x a frame's detection per frame`,
    );
  }
  if (args['best-shots'])
    for (const c of JSON.parse(fs.readFileSync(String(args['best-shots']), 'utf8'))) {
      const perFrame = c.taken / Math.max(1, c.frames);
      const before = c.takenOld / Math.max(1, c.frames);
      const cost = (n) => `${(((n * picture_ms) / detectCpu) * 100).toFixed(1)} %`;
      console.log(
        `  best shots of ${c.clip}: ${perFrame.toFixed(3)} pictures a frame (${c.taken} for ${c.tracks} tracks, ` +
          `${c.frames} frames) = ${cost(perFrame)} of the detection's CPU, one camera or an instance of such ` +
          `cameras at capacity; with the 1 % rule ${before.toFixed(3)} a frame = ${cost(before)}`,
      );
    }
  const { missed } = report([
    {
      name: `pictures at ${EVENTS_PER_S} events/s and the ring / detection at capacity, CPU`,
      value: `${(share * 100).toFixed(2)}%`,
      limit: '<= 2%',
      ok: share <= 0.02,
    },
    {
      name: 'ring memory of a live job (16:9) / inference memory request',
      value: `${((memory['16:9'] / POD_MEMORY) * 100).toFixed(2)}%`,
      limit: '<= 5%',
      ok: memory['16:9'] / POD_MEMORY <= 0.05,
    },
  ]);
  // The model's session keeps the event loop alive.
  process.exit(missed > 0 ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
