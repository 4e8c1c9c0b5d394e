/* global fetch, FormData, Blob, setTimeout, setInterval, clearInterval */
/**
 * Live job through a flood of huge images. Run after `npm run build` and scripts/stack/live/install.sh:
 *
 *   node bench/decode-flood.bench.js [--requests 16] [--images 10] [--reps 3] [--quiet 10] [--fps 5]
 *
 * One inference service in this process (in-process bus; POST /internal/v1/detect on a loopback port;
 * INFERENCE_MAX_IMAGE_PIXELS 40 M; every request admitted at once, so that only the decode budget bounds
 * them) runs a live job on a camera-like RTSP stream (gst-rtsp-server, bench/lib/rtsp-camera.js) sampled at
 * --fps. Then --reps rounds, each of
 * 1. quiet: --quiet s with the live job alone, noting when each of its frames reaches the bus;
 * 2. flood: --requests concurrent requests of --images single-colour 6000x6600 JPEGs (about 230 KB each,
 *    119 MB of RGB each once decoded; scene fire_smoke), noting the job's frames from the moment the
 *    requests are sent to the last answer, and this process's RSS every 50 ms.
 * The limits come from the same run: the quiet windows' longest gap between two frames and their frame
 * rate; for memory, what a service decoding every request's image at once would hold (requests x 119 MB).
 * Targets: the longest gap during the floods (counted from the flood's start and to its end as well, so
 * a job that published nothing meanwhile shows the whole flood as one gap) <= 3x the quiet longest gap;
 * the floods' frame rate >= 0.8x the quiet rate; the largest RSS growth during a flood <= 0.5x the
 * unbounded figure. Ends with `targets: N met, M missed`. Compare figures only within a run: the machine
 * is shared.
 *
 * services/inference/test/decode-bound.test.ts checks the same flood for correctness (every image
 * decoded within the budget, the live job still running and publishing after it, a wide memory bound);
 * how long the job waits between frames meanwhile depends on the machine's load, so it is measured here.
 */
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const http = require('node:http');
const { randomUUID } = require('node:crypto');
const { parseArgs } = require('./lib/args');
const limits = require('./lib/limits');
const { startRtspServer } = require('./lib/rtsp-camera');
const { benchIdentityDir, signerOf } = require('./lib/identity');

const root = path.resolve(__dirname, '..');
const shared = require(path.join(root, 'packages/shared/dist/index.js'));
const inference = require(path.join(root, 'services/inference/dist/index.js'));
const sharp = require(require.resolve('sharp', { paths: [path.join(root, 'services/inference')] }));

const opts = parseArgs(process.argv.slice(2));
const REQUESTS = Number(opts.requests ?? '16');
const IMAGES = Number(opts.images ?? '10');
const REPS = Number(opts.reps ?? '3');
const QUIET_S = Number(opts.quiet ?? '10');
const FPS = Number(opts.fps ?? '5');
const W = 6000;
const H = 6600;
const DECODED_MB = (W * H * 3) / 2 ** 20;
const sharedDir = process.env.VISION_SHARED_DIR ?? path.resolve(root, '../shared');
const IDENTITY_DIR = benchIdentityDir();
/** Inference is called by images and tasks: the flood signs as images. */
const SIGNER = signerOf(IDENTITY_DIR, 'images');
const JOB = 'live-during-flood';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const fmt = (v, d = 2) => v.toFixed(d);

const rssMb = () => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) / 1024 : process.memoryUsage().rss / 2 ** 20;
};

/** The longest wait between `from`, the frame times inside [from, to], and `to`; and their count. */
function window(times, from, to) {
  const inside = times.filter((t) => t >= from && t <= to);
  const marks = [from, ...inside, to];
  let longest = 0;
  for (let i = 1; i < marks.length; i++) longest = Math.max(longest, marks[i] - marks[i - 1]);
  return { frames: inside.length, seconds: (to - from) / 1000, longest };
}

async function startService(dataDir) {
  const logger = shared.createLogger('inference', { level: 'silent' });
  const bus = new shared.InProcessBus({ logger });
  const parts = await inference.createInference({
    cfg: inference.loadInferenceConfig({
      VISION_MODELS_DIR: process.env.VISION_MODELS_DIR ?? path.join(sharedDir, 'models'),
      VISION_IDENTITY_DIR: IDENTITY_DIR,
      ...limits.serviceEnv(),
      VISION_DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      INFERENCE_MAX_IMAGE_PIXELS: '40000000',
      INFERENCE_DETECT_MAX_IN_FLIGHT: String(REQUESTS),
      STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
    }),
    bus,
    objectStore: new shared.DirectoryObjectStore(path.join(dataDir, 'objects')),
    logger,
  });
  const server = http.createServer(parts.app);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const frameTimes = [];
  const sub = await bus.subscribe({
    topic: shared.TOPICS.frames,
    group: 'decode-flood-bench',
    handleBatch: async (msgs) => {
      const now = Date.now();
      for (const m of msgs) if (m.value.type === 'frame' && m.value.task_id === JOB) frameTimes.push(now);
    },
  });
  return {
    parts,
    frameTimes,
    url: `http://127.0.0.1:${server.address().port}/internal/v1/detect`,
    async close() {
      await sub.close();
      await new Promise((r) => server.close(r));
      await parts.close();
      await bus.close();
    },
  };
}

/** One request of IMAGES copies of `jpeg`; throws unless every image succeeded. */
async function detect(url, jpeg) {
  const form = new FormData();
  form.append('scene_code', 'fire_smoke');
  for (let i = 0; i < IMAGES; i++) form.append('files', new Blob([jpeg]), `img${i}.jpg`);
  const res = await fetch(url, {
    method: 'POST',
    body: form,
    headers: {
      [shared.IDENTITY_HEADER]: shared.signIdentity(
        SIGNER,
        { subject: 'svc-images', requestId: randomUUID() },
        'inference',
        { method: 'POST', target: `${new URL(url).pathname}${new URL(url).search}` },
      ),
    },
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`detect answered ${res.status}: ${JSON.stringify(body)}`);
  const failed = body.results.filter((r) => r.status !== 'succeeded');
  if (failed.length) throw new Error(`${failed.length} images failed: ${JSON.stringify(failed[0])}`);
}

async function main() {
  const jpeg = await sharp({
    create: { width: W, height: H, channels: 3, background: { r: 200, g: 90, b: 40 } },
  })
    .jpeg({ quality: 50, optimiseCoding: true })
    .toBuffer();
  const rtsp = await startRtspServer();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'decode-flood-bench-'));
  const svc = await startService(dataDir);
  try {
    const out = await svc.parts.jobs.submit({
      job_id: JOB,
      scene_code: 'person_vehicle',
      source: { type: 'stream', url: rtsp.url },
      sample_fps: FPS,
    });
    if (out.outcome !== 'accepted') throw new Error(`live job: ${JSON.stringify(out)}`);
    const deadline = Date.now() + 60_000;
    while (svc.frameTimes.length < 3) {
      if (Date.now() > deadline) throw new Error('the live job published no frames in 60 s');
      await sleep(50);
    }
    await detect(svc.url, jpeg); // warm-up: the fire_smoke engine's first run
    console.log(
      `decode-flood bench: ${REQUESTS} requests x ${IMAGES} ${W}x${H} JPEGs (${jpeg.length} bytes each), ` +
        `live job at ${FPS} fps, ${REPS} rounds, quiet ${QUIET_S} s; cpus ${os.cpus().length}, ` +
        `load average ${os
          .loadavg()
          .map((l) => fmt(l))
          .join(' ')}`,
    );
    const quiet = [];
    const flood = [];
    const growth = [];
    for (let r = 0; r < REPS; r++) {
      const q0 = Date.now();
      await sleep(QUIET_S * 1000);
      quiet.push(window(svc.frameTimes, q0, Date.now()));
      const before = rssMb();
      let peak = before;
      const timer = setInterval(() => (peak = Math.max(peak, rssMb())), 50);
      const f0 = Date.now();
      try {
        await Promise.all(Array.from({ length: REQUESTS }, () => detect(svc.url, jpeg)));
      } finally {
        clearInterval(timer);
      }
      flood.push(window(svc.frameTimes, f0, Date.now()));
      growth.push(peak - before);
      const [qw, fw] = [quiet[r], flood[r]];
      console.log(
        `  round ${r + 1}: quiet ${fmt(qw.seconds, 1)} s, ${qw.frames} frames, longest gap ${qw.longest} ms; ` +
          `flood ${fmt(fw.seconds, 1)} s, ${fw.frames} frames, longest gap ${fw.longest} ms, RSS +${fmt(peak - before, 0)} MB`,
      );
    }
    const job = svc.parts.jobs.get(JOB);
    if (job?.status !== 'running') throw new Error(`the live job ended during the run: ${job?.status}`);
    svc.parts.jobs.stop(JOB);
    await svc.parts.jobs.waitFor(JOB);

    const rate = (ws) => ws.reduce((n, w) => n + w.frames, 0) / ws.reduce((s, w) => s + w.seconds, 0);
    const quietGap = Math.max(...quiet.map((w) => w.longest));
    const floodGap = Math.max(...flood.map((w) => w.longest));
    const unboundedMb = REQUESTS * DECODED_MB;
    const peakGrowth = Math.max(...growth);
    console.log(
      `  quiet: ${fmt(rate(quiet), 2)} frames/s, longest gap ${quietGap} ms (the limits); ` +
        `floods: ${fmt(rate(flood), 2)} frames/s, longest gap ${floodGap} ms; ` +
        `RSS growth at most ${fmt(peakGrowth, 0)} MB (every request decoding at once: ${fmt(unboundedMb, 0)} MB)`,
    );
    limits.report([
      {
        name: 'longest frame gap during a flood / longest quiet gap',
        value: fmt(floodGap / quietGap),
        limit: '<= 3',
        ok: floodGap / quietGap <= 3,
      },
      {
        name: 'live frame rate during the floods / quiet rate',
        value: fmt(rate(flood) / rate(quiet)),
        limit: '>= 0.8',
        ok: rate(flood) / rate(quiet) >= 0.8,
      },
      {
        name: `RSS growth during a flood / ${REQUESTS} images decoded at once`,
        value: fmt(peakGrowth / unboundedMb),
        limit: '<= 0.5',
        ok: peakGrowth / unboundedMb <= 0.5,
      },
    ]);
  } finally {
    await svc.close();
    rtsp.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
