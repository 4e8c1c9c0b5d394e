/* global performance */
/**
 * Analytics of places benchmark: the cost of the zone and line rules per frame against the cost of
 * detecting that frame. Run after `npx tsc -b tsconfig.build.json`:
 *
 *   node bench/analytics.bench.js [--rounds 15] [--frames 200] [--image street_people_car_coco9891.jpg]
 *
 * In one process and one run, in --rounds rounds that interleave the two (the shared machine's load drifts;
 * both see it):
 * 1. detection: `session.run` alone of the COCO model (../shared/models/yolox_nano.onnx, the service's
 *    session settings) on the prepared image (bench/lib/limits.js, as the inference and image benches time
 *    the raw model); the smallest detection time a frame can have, so the ratio below is the strictest;
 * 2. analytics: AnalyticsEngine.processFrame (services/results/dist/domain/analytics) over --frames
 *    consecutive 640 x 480 frames of one continuing run, per frame; 20 rules (8 zones of 12 vertices with enter/exit
 *    hysteresis, dwell limit and an occupancy alert; 2 coverage zones watching every label, so the union of
 *    all 50 boxes is clipped; 10 lines) against 50 tracked objects per frame that walk about (seeded, made
 *    before timing).
 * Target: analytics per frame <= 1 % of detection per frame (medians over the rounds). Also prints each kind
 * of rule alone (information, no target). Ends with `targets: N met, M missed`. Compare figures only within
 * a run: the machine is shared.
 */
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { parseArgs } = require('./lib/args');
const limits = require('./lib/limits');
const { report } = require('./lib/targets');

const root = path.resolve(__dirname, '..');
const analytics = require(path.join(root, 'services/results/dist/domain/analytics/index.js'));
const { parseRules } = require(path.join(root, 'packages/shared/dist/index.js'));

const args = parseArgs(process.argv.slice(2));
const ROUNDS = Number(args.rounds ?? 15);
const FRAMES = Number(args.frames ?? 200);
const IMAGE = args.image ?? 'street_people_car_coco9891.jpg';
const SHARED_DIR = process.env.VISION_SHARED_DIR ?? path.resolve(root, '../shared');
const MODELS_DIR = process.env.VISION_MODELS_DIR ?? path.join(SHARED_DIR, 'models');
const OBJECTS = 50;
/** The frames' size in pixels (not square: every rule is decided on the image's pixels). */
const FRAME = { width: 640, height: 480 };

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function prng(seed) {
  let s = seed;
  return () => (s = (s * 16807) % 2147483647) / 2147483647;
}

function ruleSet() {
  const zones = [];
  for (let i = 0; i < 8; i++) {
    const cx = 0.25 + (i % 4) * 0.17;
    const cy = i < 4 ? 0.3 : 0.7;
    const polygon = Array.from({ length: 12 }, (_, k) => {
      const a = (2 * Math.PI * k) / 12;
      const r = k % 2 ? 0.14 : 0.2;
      return [Math.min(1, Math.max(0, cx + r * Math.cos(a))), Math.min(1, Math.max(0, cy + r * Math.sin(a)))];
    });
    zones.push({
      id: `zone-${i}`,
      polygon,
      enter_ms: 200,
      exit_ms: 400,
      dwell_limit_ms: 5000,
      occupancy: [{ label: 'person', over: 4, hysteresis_ms: 1000 }],
    });
  }
  for (let i = 0; i < 2; i++)
    zones.push({
      id: `cover-${i}`,
      polygon: [
        [0.05 + i * 0.45, 0.1],
        [0.5 + i * 0.45, 0.15],
        [0.45 + i * 0.45, 0.9],
        [0.1 + i * 0.45, 0.85],
      ].map(([x, y]) => [Math.min(1, x), y]),
      coverage: 0.3,
      enter_ms: 500,
      exit_ms: 500,
    });
  const lines = Array.from({ length: 10 }, (_, i) => ({
    id: `line-${i}`,
    start: [0.05, 0.08 + i * 0.09],
    end: [0.95, 0.1 + i * 0.085],
    hysteresis_ms: i % 2 ? 0 : 200,
  }));
  const parsed = parseRules({ zones, lines });
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.rules;
}

function makeFrames(count) {
  const rnd = prng(12345);
  const tracks = Array.from({ length: OBJECTS }, (_, i) => ({ id: i, x: rnd(), y: rnd(), vx: 0, vy: 0 }));
  let nextId = OBJECTS;
  const frames = [];
  for (let seq = 0; seq < count; seq++) {
    const objects = tracks.map((t, i) => {
      if (rnd() < 0.002) Object.assign(t, { id: nextId++, x: rnd(), y: rnd() }); // a track ends, another starts
      t.vx = 0.8 * t.vx + (rnd() - 0.5) * 0.006;
      t.vy = 0.8 * t.vy + (rnd() - 0.5) * 0.006;
      t.x = Math.min(0.97, Math.max(0.03, t.x + t.vx));
      t.y = Math.min(0.97, Math.max(0.12, t.y + t.vy));
      const w = 0.03 + (i % 5) * 0.01;
      return {
        label: i % 4 === 0 ? 'car' : 'person',
        score: 0.5 + (i % 10) / 20,
        box: [t.x - w / 2, t.y - 0.1, t.x + w / 2, t.y],
        track_id: String(t.id),
      };
    });
    frames.push({ seq, time_ms: seq * 40, width: FRAME.width, height: FRAME.height, objects });
  }
  return frames;
}

/** ms per frame of processFrame over frames[from, from + n). */
function timeFrames(engine, frames, from, n) {
  const t0 = performance.now();
  for (let i = from; i < from + n; i++) engine.processFrame(frames[i]);
  return (performance.now() - t0) / n;
}

async function main() {
  const rules = ruleSet();
  const frames = makeFrames(ROUNDS * FRAMES + FRAMES);
  const model = await limits.loadModel(MODELS_DIR);
  const raw = new limits.RawLimits(model, [fs.readFileSync(path.join(SHARED_DIR, 'media/images', IMAGE))]);
  await raw.warmUp();

  const engine = analytics.AnalyticsEngine.create('bench', rules);
  const alone = {
    'anchor zones (8)': analytics.AnalyticsEngine.create('bench', {
      zones: rules.zones.slice(0, 8),
      lines: [],
    }),
    'coverage zones (2)': analytics.AnalyticsEngine.create('bench', {
      zones: rules.zones.slice(8),
      lines: [],
    }),
    'lines (10)': analytics.AnalyticsEngine.create('bench', { zones: [], lines: rules.lines }),
  };
  // Warm-up: the first block of frames, not timed.
  timeFrames(engine, frames, 0, FRAMES);
  for (const e of Object.values(alone)) timeFrames(e, frames, 0, FRAMES);
  const perFrame = [];
  const perKind = Object.fromEntries(Object.keys(alone).map((k) => [k, []]));
  let events = 0;
  for (let r = 0; r < ROUNDS; r++) {
    await raw.modelRound();
    const from = FRAMES * (r + 1);
    perFrame.push(timeFrames(engine, frames, from, FRAMES));
    for (const [k, e] of Object.entries(alone)) perKind[k].push(timeFrames(e, frames, from, FRAMES));
  }
  const counter = analytics.AnalyticsEngine.create('bench', rules);
  for (const f of frames) events += counter.processFrame(f).events.length;

  const model_ms = raw.summary().model;
  const analytics_ms = median(perFrame);
  const ratio = analytics_ms / model_ms;
  console.log(
    `analytics bench (image ${IMAGE}, ${ROUNDS} rounds of ${FRAMES} frames, cpus ${os.cpus().length}, load average ${os
      .loadavg()
      .map((v) => v.toFixed(2))
      .join(' ')})`,
  );
  console.log(`  detection (session.run only):   ${model_ms.toFixed(2)} ms/frame`);
  console.log(
    `  analytics, 20 rules x ${OBJECTS} objects: ${(analytics_ms * 1000).toFixed(1)} us/frame = ${(ratio * 100).toFixed(2)} % of detection`,
  );
  for (const [k, xs] of Object.entries(perKind))
    console.log(`    ${k.padEnd(20)} ${(median(xs) * 1000).toFixed(1)} us/frame`);
  console.log(`  events over ${frames.length} frames: ${events}`);
  const { missed } = report([
    {
      name: 'analytics per frame / detection per frame',
      value: `${(ratio * 100).toFixed(2)}%`,
      limit: '<= 1%',
      ok: ratio <= 0.01,
    },
  ]);
  // The model's session keeps the event loop alive.
  process.exit(missed > 0 ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
