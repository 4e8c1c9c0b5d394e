/* global setTimeout */
/**
 * Live-stream capacity bench. Run after `npm run build` and scripts/stack/live/install.sh:
 *
 *   node bench/live.bench.js [--fps 5] [--window 20] [--warmup 8] [--max 32] [--reps 5] [--n N]
 *
 * In one run it measures
 * 1. the raw model: `session.run` alone on one 416x416 tensor (--reps rounds of bench/lib/limits.js
 *    before each trial; the median over all) -> raw fps, and the limit N* = raw fps / sampling fps (how many
 *    streams the model alone could keep up with);
 * 2. N concurrent camera-like RTSP streams (one gst-rtsp-server, scripts/stack/live/rtsp-server.py,
 *    keyframe every second) on one inference instance at the sampling rate --fps (default: the
 *    service's default, INFERENCE_SAMPLE_FPS=5): per N, after --warmup s, for --window s, the share of
 *    sampled frames dropped (the job skipped them: detection fell behind) and the p95 latency from
 *    capture (the frame leaving ffmpeg, its captured_at_ms) to the frame stored: the results service's
 *    own ingest (framesBatchHandler, FrameWriter, FramesStore over PGlite, as in the standalone process)
 *    consumes vision.frames in this process, and a frame counts as stored when the batch that carried
 *    it has been written; N doubles from 1, then bisects, to the largest N with under 1 % dropped.
 * Target: largest N >= 0.8 x N*. Ends with `targets: N met, M missed`.
 * `--n N` runs one trial at N streams and no search (to profile one load, e.g. beside a CPU sampler); the target
 * line then judges that N.
 */
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { parseArgs } = require('./lib/args');
const limits = require('./lib/limits');
const { startRtspServer } = require('./lib/rtsp-camera');

const root = path.resolve(__dirname, '..');
const shared = require(path.join(root, 'packages/shared/dist/index.js'));
const inference = require(path.join(root, 'services/inference/dist/index.js'));
const resultsService = require(path.join(root, 'services/results/dist/index.js'));
const { benchIdentityDir } = require('./lib/identity');

const opts = parseArgs(process.argv.slice(2));
const fps = Number(opts.fps ?? '5');
const windowS = Number(opts.window ?? '20');
const warmupS = Number(opts.warmup ?? '8');
const maxN = Number(opts.max ?? '32');
const reps = Number(opts.reps ?? '5');
const fixedN = opts.n === undefined ? undefined : Number(opts.n);
const sharedDir = process.env.VISION_SHARED_DIR ?? path.resolve(root, '../shared');
const modelsDir = process.env.VISION_MODELS_DIR ?? path.join(sharedDir, 'models');
const IDENTITY_DIR = benchIdentityDir();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const fmt = (v, d = 2) => v.toFixed(d);

/**
 * session.run alone (bench/lib/limits.js RawLimits, the measure of the image benches), in --reps rounds
 * before each trial: the machine is shared and its load drifts; interleaving exposes both to the same drift.
 */
async function rawModelMeter() {
  const model = await limits.loadModel(modelsDir);
  const images = [fs.readFileSync(path.join(sharedDir, 'media/images/street_people_car_coco9891.jpg'))];
  const rawLimits = new limits.RawLimits(model, images);
  await rawLimits.warmUp();
  return {
    async measure() {
      const from = rawLimits.modelTimes.length;
      for (let r = 0; r < reps; r++) await rawLimits.modelRound();
      return limits.median(rawLimits.modelTimes.slice(from));
    },
    median: () => rawLimits.summary().model,
    close: () => model.close(),
  };
}

async function main() {
  const raw = await rawModelMeter();
  const rawTimes = [];
  const rtsp = await startRtspServer();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'live-bench-'));
  const logger = shared.createLogger('inference', { level: 'silent' });
  const bus = new shared.InProcessBus({ logger });
  const store = new shared.DirectoryObjectStore(path.join(dataDir, 'objects'));
  const parts = await inference.createInference({
    cfg: inference.loadInferenceConfig({
      VISION_MODELS_DIR: modelsDir,
      VISION_IDENTITY_DIR: IDENTITY_DIR,
      ...limits.serviceEnv(),
      VISION_DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      INFERENCE_MAX_JOBS: String(maxN + 1),
      INFERENCE_SAMPLE_FPS: String(fps),
      STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
    }),
    bus,
    objectStore: store,
    logger,
  });
  // The results service's ingest, as the standalone process runs it: its stores on its own database.
  const resultsDb = await shared.openDb(
    { VISION_MODE: 'standalone', VISION_DATA_DIR: ':memory:', DATABASE_URL: undefined },
    { schema: 'results', migrations: resultsService.migrations, memory: true },
  );
  const frames = new resultsService.FramesStore(resultsDb.knex);
  const resultTasks = new resultsService.TasksStore(resultsDb.knex);
  const ingest = resultsService.framesBatchHandler({
    frames,
    tasks: resultTasks,
    writer: new resultsService.FrameWriter(frames, resultTasks, shared.systemClock, {
      lingerMs: resultsService.loadResultsConfig({ VISION_IDENTITY_DIR: IDENTITY_DIR })
        .RESULTS_INGEST_LINGER_MS,
    }),
    clock: shared.systemClock,
    logger,
  });
  const latencies = new Map(); // job id -> [capture -> stored ms] inside the window
  let windowOpen = false;
  const sub = await bus.subscribe({
    topic: shared.TOPICS.frames,
    group: resultsService.RESULTS_GROUP,
    handleBatch: async (msgs) => {
      await ingest(msgs);
      const storedAt = Date.now();
      for (const m of msgs) {
        if (m.value.type !== 'frame' || !windowOpen) continue;
        const list = latencies.get(m.value.task_id) ?? [];
        list.push(storedAt - m.value.captured_at_ms);
        latencies.set(m.value.task_id, list);
      }
    },
  });

  let run = 0;
  async function trial(n) {
    const rawMs = await raw.measure();
    rawTimes.push(rawMs);
    console.log(`  raw model (session.run only) before N=${n}: ${fmt(rawMs)} ms/frame`);
    const ids = [];
    for (let i = 0; i < n; i++) {
      const id = `bench-${run}-${i}`;
      const out = await parts.jobs.submit({
        job_id: id,
        scene_code: 'person_vehicle',
        source: { type: 'stream', url: rtsp.url },
      });
      if (out.outcome !== 'accepted') throw new Error(`job ${id}: ${JSON.stringify(out)}`);
      ids.push(id);
    }
    run++;
    await sleep(warmupS * 1000);
    const before = ids.map((id) => parts.jobs.get(id));
    latencies.clear();
    windowOpen = true;
    await sleep(windowS * 1000);
    windowOpen = false;
    const after = ids.map((id) => parts.jobs.get(id));
    for (const id of ids) parts.jobs.stop(id);
    await Promise.all(ids.map((id) => parts.jobs.waitFor(id)));
    let published = 0;
    let dropped = 0;
    for (let i = 0; i < n; i++) {
      published += after[i].frames_published - before[i].frames_published;
      dropped += after[i].frames_dropped - before[i].frames_dropped;
    }
    const all = [...latencies.values()].flat();
    const dropShare = published + dropped > 0 ? dropped / (published + dropped) : 1;
    const expected = n * fps * windowS;
    const r = {
      n,
      published,
      dropped,
      dropShare,
      p95: all.length ? limits.percentile(all, 95) : NaN,
      delivered: published / expected,
    };
    console.log(
      `  N=${String(n).padStart(2)}: ${published} frames published, ${dropped} dropped (${fmt(dropShare * 100, 1)} %), ` +
        `${fmt(r.delivered * 100, 0)} % of ${expected} expected, p95 capture->stored ${fmt(r.p95, 0)} ms ${dropShare < 0.01 && r.delivered > 0.9 ? 'ok' : 'over'}`,
    );
    return r;
  }
  const ok = (r) => r.dropShare < 0.01 && r.delivered > 0.9;

  console.log(
    `live bench (RTSP gst-rtsp-server, sampling ${fps} fps, window ${windowS} s, cpus ${os.cpus().length})`,
  );
  const results = new Map();
  const check = async (n) => {
    if (!results.has(n)) results.set(n, await trial(n));
    return ok(results.get(n));
  };
  let good = 0;
  let bad = maxN + 1;
  if (fixedN !== undefined) {
    if (await check(fixedN)) good = fixedN;
    bad = good + 1;
  }
  for (let n = 1; fixedN === undefined && n <= maxN; n *= 2) {
    if (await check(n)) good = n;
    else {
      bad = n;
      break;
    }
  }
  while (bad - good > 1) {
    const mid = Math.floor((good + bad) / 2);
    if (await check(mid)) good = mid;
    else bad = mid;
  }
  const best = results.get(good);
  const rawMs = raw.median();
  const rawFps = 1000 / rawMs;
  const limit = rawFps / fps;
  console.log(
    `  raw model (session.run only), median over the rounds before ${rawTimes.length} trials: ${fmt(rawMs)} ms/frame = ${fmt(rawFps, 1)} fps -> limit N* = ${fmt(limit, 1)} streams at ${fps} fps`,
  );
  const ratio = good / limit;
  const met = ratio >= 0.8;
  console.log(
    `  largest N with < 1 % dropped: ${good}${best ? ` (p95 capture->stored ${fmt(best.p95, 0)} ms)` : ''}; ` +
      `ratio ${fmt(ratio)} of the limit ${fmt(limit, 1)} (target >= 0.80) ${met ? 'OK' : 'MISSED'}`,
  );
  limits.report([
    {
      name: 'largest N with < 1 % dropped / (raw model fps / sampling fps) >= 0.80',
      value: fmt(ratio),
      limit: `0.80 of ${fmt(limit, 1)}`,
      ok: met,
    },
  ]);
  await sub.close();
  const stored = await resultsDb.knex('result_frames').count({ n: '*' }).first();
  console.log(`  frames stored by the results ingest over the run: ${stored.n}`);
  await resultsDb.close();
  await raw.close();
  await parts.close();
  await bus.close();
  rtsp.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
