#!/usr/bin/env node
/**
 * Evaluates the built-in fire/smoke detector (services/inference/src/fire) on
 * ../shared/datasets/dfire-valid and optionally fits its score calibration.
 *
 *   node scripts/eval-fire.js            # evaluate the detector's default options
 *   node scripts/eval-fire.js --fit      # fit the logistic score on the even-id half, then evaluate
 *   node scripts/eval-fire.js --dist     # load the compiled services/inference/dist instead of the sources
 *   node scripts/eval-fire.js --lower-bound 0.5
 *   node scripts/eval-fire.js --limit 20   # the first 20 images only (a quick check of the script itself)
 *   node scripts/eval-fire.js --help
 *
 * Metrics (fire only; the dataset has no smoke labels):
 *   - image-level precision / recall: an image is predicted positive when any fire detection scores
 *     >= the lower bound; it is positive when it has at least one fire box.
 *   - box AP50: greedy matching by descending score at IoU >= 0.5 against the labelled boxes (each box
 *     matched at most once), precision made monotone and integrated over all recall points (VOC 2010+
 *     "all points" interpolation). Scored over every candidate the detector returns (minScore 0).
 * Splits: "even" = images with even COCO id (used to choose parameters), "odd" = held out, "all".
 * Sources are transpiled on load by TypeScript's transpileModule (`typescript`, a root dev dependency), so no
 * build is needed; --dist uses the tsc output.
 */
'use strict';
const fs = require('fs');
const path = require('path');

const repoRoot = path.resolve(__dirname, '..');
const sharedDir = process.env.VISION_SHARED_DIR ?? path.resolve(repoRoot, '../shared');
const datasetDir = path.join(sharedDir, 'datasets/dfire-valid');
const { iou, evaluate, loadDfire } = require('./fire-metrics');

const USAGE = `usage: node scripts/eval-fire.js [options]
Evaluates the fire/smoke detector on ${path.relative(repoRoot, datasetDir)} (set VISION_SHARED_DIR to move it).
  --fit                fit the logistic score on the even-id half, then evaluate
  --dist               load services/inference/dist (after npm run build) instead of the sources
  --lower-bound N      score bound for an image to count as positive (default: best F0.5 on the even half)
  --limit N            evaluate the first N images only
  --opts JSON          detector options
  --json FILE          write the result as JSON
  --diag               print candidate coverage
  --help               print this text`;

function positiveInteger(name, value) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} needs a positive integer, got ${value}`);
  return n;
}

function parseArgs(argv) {
  const args = { fit: false, dist: false, lowerBound: undefined, json: undefined, limit: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') args.help = true;
    else if (a === '--limit') args.limit = positiveInteger(a, argv[++i]);
    else if (a === '--fit') args.fit = true;
    else if (a === '--dist') args.dist = true;
    else if (a === '--lower-bound') args.lowerBound = Number(argv[++i]);
    else if (a === '--json') args.json = argv[++i];
    else if (a === '--diag') args.diag = true;
    else if (a === '--opts') args.opts = JSON.parse(argv[++i]);
    else throw new Error(`unknown argument ${a}`);
  }
  return args;
}

function registerTs() {
  const ts = require('typescript');
  const compilerOptions = { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS };
  require.extensions['.ts'] = (mod, filename) => {
    const src = fs.readFileSync(filename, 'utf8');
    const { outputText } = ts.transpileModule(src, { fileName: filename, compilerOptions });
    mod._compile(outputText, filename);
  };
}

function loadDetector(dist) {
  if (dist) return require(path.join(repoRoot, 'services/inference/dist/fire/index.js'));
  registerTs();
  return require(path.join(repoRoot, 'services/inference/src/fire/index.ts'));
}

/**
 * Training label of a candidate region: it lies on labelled fire when the labelled boxes cover at
 * least a quarter of it, or when it contains at least half of some labelled box (a merged region
 * around several flame boxes is still fire).
 */
function onLabelledFire(a, boxes) {
  let covered = 0;
  const area = (a.x2 - a.x1) * (a.y2 - a.y1);
  for (const b of boxes) {
    const iw = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1);
    const ih = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1);
    if (iw <= 0 || ih <= 0) continue;
    covered += iw * ih;
    if ((iw * ih) / ((b.x2 - b.x1) * (b.y2 - b.y1)) >= 0.5) return true;
  }
  return covered / area >= 0.25;
}

/** L2-regularised logistic regression by full-batch gradient descent on standardised features. */
function fitLogistic(X, y, { l2 = 1e-3, iters = 4000, lr = 0.5 } = {}) {
  const d = X[0].length;
  const mean = new Array(d).fill(0);
  const sd = new Array(d).fill(0);
  for (const x of X) for (let k = 0; k < d; k++) mean[k] += x[k] / X.length;
  for (const x of X) for (let k = 0; k < d; k++) sd[k] += (x[k] - mean[k]) ** 2 / X.length;
  for (let k = 0; k < d; k++) sd[k] = Math.sqrt(sd[k]) || 1;
  const Z = X.map((x) => x.map((v, k) => (v - mean[k]) / sd[k]));
  let w = new Array(d).fill(0);
  let b = 0;
  for (let it = 0; it < iters; it++) {
    const gw = new Array(d).fill(0);
    let gb = 0;
    for (let i = 0; i < Z.length; i++) {
      let z = b;
      for (let k = 0; k < d; k++) z += w[k] * Z[i][k];
      const p = 1 / (1 + Math.exp(-z));
      const e = p - y[i];
      gb += e / Z.length;
      for (let k = 0; k < d; k++) gw[k] += (e * Z[i][k]) / Z.length;
    }
    for (let k = 0; k < d; k++) w[k] -= lr * (gw[k] + l2 * w[k]);
    b -= lr * gb;
  }
  // back to raw feature space
  const weights = w.map((wk, k) => wk / sd[k]);
  const bias = b - w.reduce((s, wk, k) => s + (wk * mean[k]) / sd[k], 0);
  return { bias, weights };
}

async function loadRecords(det, opts, limit) {
  const sharp = require('sharp');
  sharp.concurrency(1);
  const images = loadDfire(datasetDir).slice(0, limit);
  const records = [];
  const t0 = Date.now();
  for (const im of images) {
    const { data, info } = await sharp(im.path)
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    const img = { data, width: info.width, height: info.height, channels: 3 };
    const a = det.analyzeFrame(img, { ...(opts ?? {}), minScore: 0 });
    const sx = a.img.scaleX;
    const sy = a.img.scaleY;
    const fire = a.fire.map((c) => ({
      features: c.features,
      score: c.score,
      box: {
        x1: c.box.minX * sx,
        y1: c.box.minY * sy,
        x2: Math.min(info.width, (c.box.maxX + 1) * sx),
        y2: Math.min(info.height, (c.box.maxY + 1) * sy),
      },
    }));
    records.push({ id: im.id, file: im.file, gts: im.gts, fire });
  }
  return { records, seconds: (Date.now() - t0) / 1000 };
}

function chooseLowerBound(records, scoreOf) {
  // Highest F0.5 (precision weighted twice as much as recall: a published false fire alarm costs more
  // than a missed frame) on the given split over a 0.05 grid; ties go to the higher bound.
  let best = { lb: 0.5, f: -1 };
  const b2 = 0.25;
  for (let lb = 0.05; lb <= 0.951; lb += 0.05) {
    const r = evaluate(records, scoreOf, lb);
    const f = ((1 + b2) * r.precision * r.recall) / (b2 * r.precision + r.recall || 1);
    if (f >= best.f) best = { lb: Math.round(lb * 100) / 100, f };
  }
  return best;
}

/** Candidate coverage: how many labelled boxes have any candidate at IoU >= 0.5 / >= 0.1. */
function diagnostics(records) {
  let gts = 0;
  let hit5 = 0;
  let hit1 = 0;
  let posWithCand = 0;
  let pos = 0;
  let negWithCand = 0;
  for (const r of records) {
    if (r.gts.length) {
      pos++;
      if (r.fire.length) posWithCand++;
    } else if (r.fire.length) negWithCand++;
    for (const g of r.gts) {
      gts++;
      const best = Math.max(0, ...r.fire.map((c) => iou(c.box, g)));
      if (best >= 0.5) hit5++;
      if (best >= 0.1) hit1++;
    }
  }
  console.log(
    `diag: gt boxes ${gts}, with a candidate at IoU>=0.5: ${hit5}, >=0.1: ${hit1}; positives with any candidate ${posWithCand}/${pos}; negatives with any candidate ${negWithCand}`,
  );
}

function fmt(r) {
  return `images=${r.images} P=${r.precision.toFixed(3)} R=${r.recall.toFixed(3)} (tp=${r.tp} fp=${r.fp} fn=${r.fn} tn=${r.tn}) AP50=${r.ap50.toFixed(3)} gtBoxes=${r.gtBoxes}`;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.help) {
    console.log(USAGE);
    return;
  }
  const det = loadDetector(args.dist);
  const { records, seconds } = await loadRecords(det, args.opts, args.limit);
  const even = records.filter((r) => r.id % 2 === 0);
  const odd = records.filter((r) => r.id % 2 === 1);
  console.log(
    `decoded+analysed ${records.length} images in ${seconds.toFixed(1)} s (${even.length} even, ${odd.length} odd)`,
  );

  let model = null;
  let scoreOf = (c) => c.score;
  if (args.fit) {
    const X = [];
    const y = [];
    for (const r of even) {
      for (const c of r.fire) {
        X.push(c.features);
        y.push(onLabelledFire(c.box, r.gts) ? 1 : 0);
      }
    }
    model = fitLogistic(X, y);
    const round = (v) => Math.round(v * 1000) / 1000;
    model = { bias: round(model.bias), weights: model.weights.map(round) };
    console.log(`fitted on ${X.length} even-split candidates (${y.filter(Boolean).length} positive):`);
    console.log(JSON.stringify(model));
    console.log(`features: ${det.FIRE_FEATURE_NAMES.join(', ')}`);
    scoreOf = (c) => det.logisticScore(model, c.features);
  }
  const chosen = chooseLowerBound(even, scoreOf);
  const lowerBound = args.lowerBound ?? chosen.lb;
  console.log(
    `lower bound with best F0.5 on the even split: ${chosen.lb} (F0.5 ${chosen.f.toFixed(3)}); using ${lowerBound}`,
  );
  const result = {
    lowerBound,
    even: evaluate(even, scoreOf, lowerBound),
    odd: evaluate(odd, scoreOf, lowerBound),
    all: evaluate(records, scoreOf, lowerBound),
    model,
  };
  console.log(`even (tuning):   ${fmt(result.even)}`);
  console.log(`odd (held out):  ${fmt(result.odd)}`);
  console.log(`all:             ${fmt(result.all)}`);
  for (const lb of [0.3, 0.5, 0.7, 0.8, 0.9])
    console.log(`  all @${lb}: ${fmt(evaluate(records, scoreOf, lb))}`);
  if (args.diag) diagnostics(records);
  if (args.json) fs.writeFileSync(args.json, JSON.stringify(result, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
