/* global performance */
/**
 * Tracking benchmark: the service's tracker (ByteTracker, services/inference/dist/tracking) against peers on
 * public ground truth, and its cost. Run after `npx tsc -b tsconfig.build.json`:
 *
 *   node bench/tracking.bench.js [--mot ../shared/datasets/mot15-dev] [--seqs A,B] [--out DIR]
 *                                [--options '{"lostBufferS": 1}'] [--rounds 15] [--skip-cost]
 *
 * 1. Quality. On each sequence's public detections (det/det.txt), at the native frame rate and at about
 *    5 fps (every k-th frame, k = round(fps / 5)): ours (the service's default options, or --options) and
 *    the peers with their library defaults: SORT, ByteTrack and OC-SORT of PyPI `trackers` 2.6.1, and
 *    supervision 0.26.1's ByteTrack (scripts/reference/install-trackers.sh installs them in a venv under
 *    ~/.cache; scripts/reference/mot-trackers.py runs and scores them). Each result is written to
 *    OUT/<tracker>/<rate>/<seq>.txt (MOT format, the source's frame numbers). Scores: MOTA, IDF1 and ID
 *    switches by motmetrics (IoU 0.5), HOTA by TrackEval, per sequence and combined, on the rate's frames.
 *    Targets, combined, at both rates: IDF1 and HOTA at least the best peer's, ID switches at most the
 *    best peer's.
 * 2. Cost (unless --skip-cost). In --rounds rounds that interleave the two (the shared machine's load
 *    drifts): detection, `session.run` alone of the COCO model (../shared/models/yolox_nano.onnx, the
 *    service's session settings; bench/lib/limits.js); tracking, ByteTracker.update over 200 consecutive
 *    frames of 50 walking people (seeded). Target: tracking per frame <= 1 % of detection per frame.
 * Ends with `targets: N met, M missed`. Compare figures only within a run: the machine is shared.
 */
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { execFileSync } = require('node:child_process');
const { parseArgs } = require('./lib/args');
const { report } = require('./lib/targets');
const mot = require('./lib/mot-sequences');

const root = path.resolve(__dirname, '..');
const { ByteTracker } = require(path.join(root, 'services/inference/dist/tracking/byte-tracker.js'));

const args = parseArgs(process.argv.slice(2));
const SHARED_DIR = process.env.VISION_SHARED_DIR ?? path.resolve(root, '../shared');
const MOT_DIR = path.resolve(args.mot ?? path.join(SHARED_DIR, 'datasets/mot15-dev'));
const SEQS = args.seqs ? args.seqs.split(',') : mot.listSequences(MOT_DIR);
const OUT = path.resolve(args.out ?? path.join(os.tmpdir(), 'vision-tracking-bench'));
const OPTIONS = args.options ? JSON.parse(args.options) : {};
const ROUNDS = Number(args.rounds ?? 15);
const RATES = [
  { name: 'native', fps: null },
  { name: '5fps', fps: 5 },
];
const PEERS = ['sort', 'bytetrack', 'ocsort', 'sv-bytetrack'];
const PEER_NAMES = {
  sort: 'SORT (trackers)',
  bytetrack: 'ByteTrack (trackers)',
  ocsort: 'OC-SORT (trackers)',
  'sv-bytetrack': 'ByteTrack (supervision)',
};
const OURS = 'ours';

function python() {
  const out = execFileSync('bash', [path.join(root, 'scripts/reference/install-trackers.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return out.trim().split('\n').pop();
}

function helper(py, command, request) {
  const out = execFileSync(py, [path.join(root, 'scripts/reference/mot-trackers.py'), command], {
    input: JSON.stringify(request),
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
  });
  return command === 'score' ? JSON.parse(out) : undefined;
}

function runOurs() {
  for (const name of SEQS) {
    const seq = mot.readSequence(MOT_DIR, name);
    for (const rate of RATES) {
      const k = rate.fps ? mot.stepFor(seq.fps, rate.fps) : 1;
      const lines = mot.trackSequence(seq, k, () => new ByteTracker(OPTIONS));
      mot.writeResult(path.join(OUT, OURS, rate.name, `${name}.txt`), lines);
    }
  }
}

const fmt = (s) =>
  `${s.mota.toFixed(1).padStart(6)} ${s.idf1.toFixed(1).padStart(6)} ${String(s.idsw).padStart(5)} ${s.hota.toFixed(1).padStart(6)}`;

function printScores(scores) {
  const trackers = [OURS, ...PEERS];
  for (const rate of RATES) {
    console.log(
      `\n  ${rate.name === 'native' ? 'native frame rate' : 'about 5 fps (every k-th frame)'}: MOTA IDF1 IDSW HOTA`,
    );
    for (const seq of [...SEQS, 'COMBINED']) {
      console.log(`    ${seq}`);
      for (const t of trackers)
        console.log(
          `      ${(t === OURS ? 'ours (ByteTracker)' : PEER_NAMES[t]).padEnd(26)} ${fmt(scores[t][rate.name][seq])}`,
        );
    }
  }
}

function qualityChecks(scores) {
  const checks = [];
  for (const rate of RATES) {
    const ours = scores[OURS][rate.name].COMBINED;
    const peers = PEERS.map((p) => scores[p][rate.name].COMBINED);
    const bestIdf1 = Math.max(...peers.map((s) => s.idf1));
    const bestHota = Math.max(...peers.map((s) => s.hota));
    const bestIdsw = Math.min(...peers.map((s) => s.idsw));
    checks.push(
      {
        name: `IDF1 ${rate.name}`,
        value: ours.idf1.toFixed(2),
        limit: `>= ${bestIdf1.toFixed(2)}`,
        ok: ours.idf1 >= bestIdf1,
      },
      {
        name: `HOTA ${rate.name}`,
        value: ours.hota.toFixed(2),
        limit: `>= ${bestHota.toFixed(2)}`,
        ok: ours.hota >= bestHota,
      },
      {
        name: `ID switches ${rate.name}`,
        value: ours.idsw,
        limit: `<= ${bestIdsw}`,
        ok: ours.idsw <= bestIdsw,
      },
    );
  }
  return checks;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** 50 people walking about a 1920 x 1080 frame at 30 fps (seeded), some hidden now and then. */
function walkers(frames, objects = 50) {
  let s = 12345;
  const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647;
  const people = Array.from({ length: objects }, () => ({
    x: rnd() * 1800,
    y: rnd() * 900,
    vx: (rnd() - 0.5) * 8,
    vy: (rnd() - 0.5) * 4,
    h: 120 + rnd() * 120,
  }));
  const out = [];
  for (let f = 0; f < frames; f++) {
    const dets = [];
    for (const p of people) {
      p.x = (p.x + p.vx + 1920) % 1920;
      p.y = (p.y + p.vy + 1080) % 1080;
      if (rnd() < 0.05) continue; // missed by the detector this frame
      const w = p.h * 0.4;
      dets.push({
        label: 'person',
        score: 0.5 + rnd() / 2,
        box: { x1: p.x, y1: p.y, x2: p.x + w, y2: p.y + p.h },
      });
    }
    out.push(dets);
  }
  return out;
}

async function cost() {
  const limits = require('./lib/limits');
  const model = await limits.loadModel(process.env.VISION_MODELS_DIR ?? path.join(SHARED_DIR, 'models'));
  const image = fs.readFileSync(path.join(SHARED_DIR, 'media/images', 'street_people_car_coco9891.jpg'));
  const raw = new limits.RawLimits(model, [image]);
  await raw.warmUp();
  const FRAMES = 200;
  const frames = walkers(FRAMES * (ROUNDS + 1));
  const timeFrames = (tracker, from) => {
    const t0 = performance.now();
    for (let f = from; f < from + FRAMES; f++) tracker.update(frames[f], (f * 1000) / 30);
    return (performance.now() - t0) / FRAMES;
  };
  const tracker = new ByteTracker(OPTIONS);
  timeFrames(tracker, 0); // warm-up
  const perFrame = [];
  for (let r = 0; r < ROUNDS; r++) {
    await raw.modelRound();
    perFrame.push(timeFrames(tracker, FRAMES * (r + 1)));
  }
  const modelMs = raw.summary().model;
  const trackMs = median(perFrame);
  const ratio = trackMs / modelMs;
  console.log(`\n  cost (${ROUNDS} rounds of ${FRAMES} frames of 50 people, cpus ${os.cpus().length})`);
  console.log(`    detection (session.run only): ${modelMs.toFixed(2)} ms/frame`);
  console.log(
    `    tracking, 50 objects:         ${(trackMs * 1000).toFixed(1)} us/frame = ${(ratio * 100).toFixed(2)} % of detection`,
  );
  return {
    name: 'tracking per frame / detection per frame',
    value: `${(ratio * 100).toFixed(2)}%`,
    limit: '<= 1%',
    ok: ratio <= 0.01,
  };
}

async function main() {
  const py = python();
  fs.rmSync(OUT, { recursive: true, force: true });
  console.log(`tracking bench (${MOT_DIR}, ${SEQS.length} sequences, results in ${OUT})`);
  console.log(`  our options: ${JSON.stringify(OPTIONS)}`);
  const t0 = performance.now();
  runOurs();
  const oursS = (performance.now() - t0) / 1000;
  helper(py, 'track', { mot: MOT_DIR, seqs: SEQS, rates: RATES, out: OUT, peers: PEERS });
  const { versions, scores } = helper(py, 'score', {
    mot: MOT_DIR,
    seqs: SEQS,
    rates: RATES,
    results: OUT,
    trackers: [OURS, ...PEERS],
    work: path.join(OUT, 'scoring'),
  });
  console.log(
    `  peers and scorers: ${Object.entries(versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  console.log(`  ours tracked both rates of every sequence in ${oursS.toFixed(2)} s`);
  printScores(scores);
  const checks = qualityChecks(scores);
  if (args['skip-cost'] !== 'true') checks.push(await cost());
  const { missed } = report(checks);
  // The model's session keeps the event loop alive.
  process.exit(missed > 0 ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
