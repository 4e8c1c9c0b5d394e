#!/usr/bin/env node
/**
 * Measures the fire_smoke scene through the public image endpoint (SPEC 4.6) on
 * ../shared/datasets/dfire-valid: starts the standalone stack from the compiled dist (run
 * `npm run build` first) on ephemeral loopback ports, posts the images 10 per request with
 * scene_code=fire_smoke, and scores the returned `fire` objects (metrics in scripts/fire-metrics.js).
 *
 *   node scripts/eval-fire-service.js                    # the engine the service picks by default
 *   node scripts/eval-fire-service.js --builtin          # force the built-in colour-and-motion detector
 *   node scripts/eval-fire-service.js --lower-bound 0.01 # run the service with another scene lower bound
 *   node scripts/eval-fire-service.js --json out.json
 *   node scripts/eval-fire-service.js --media            # also list what it finds on ../shared/media/images
 *
 * Only detections at or above the scene's lower bound leave the service, so box AP50 here is the AP of
 * what a caller receives; --lower-bound 0.01 gives the model's whole precision/recall curve.
 */
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { randomUUID } = require('crypto');
const { evaluate, loadDfire } = require('./fire-metrics');

const repoRoot = path.resolve(__dirname, '..');
const KEY = 'eval-fire-service-0123456789';

function parseArgs(argv) {
  const args = { builtin: false, lowerBound: undefined, json: undefined, limit: 0, media: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--builtin') args.builtin = true;
    else if (a === '--lower-bound') args.lowerBound = Number(argv[++i]);
    else if (a === '--json') args.json = argv[++i];
    else if (a === '--limit') args.limit = Number(argv[++i]);
    else if (a === '--media') args.media = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return args;
}

/** Starts the standalone stack from dist with a key whose image quota covers the whole set. */
async function startEvalStack({ sharedDir, builtin = false, lowerBound }) {
  const { startStandalone } = require(path.join(repoRoot, 'apps/standalone/dist/index.js'));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'eval-fire-'));
  const env = {
    PATH: process.env.PATH,
    LOG_LEVEL: 'silent',
    VISION_DATA_DIR: dataDir,
    VISION_MODELS_DIR: path.join(sharedDir, 'models'),
    VISION_API_KEYS: `${KEY}:eval-fire`,
    QUOTA_IMAGE_DAILY: '100000',
  };
  if (lowerBound !== undefined) env.FIRE_SMOKE_LOWER_BOUND = String(lowerBound);
  if (builtin) {
    const scenes = path.join(dataDir, 'scenes.json');
    const entry = { engine: 'builtin', detector: 'fire-colour-motion' };
    if (lowerBound !== undefined) entry.lower_bound = lowerBound;
    fs.writeFileSync(scenes, JSON.stringify({ scenes: { fire_smoke: entry } }));
    env.INFERENCE_SCENES_FILE = scenes;
  }
  const stack = await startStandalone({ ports: 'ephemeral', env });
  return {
    url: stack.url,
    key: KEY,
    close: async () => {
      await stack.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Posts dfire-valid (or its first `limit` images) to a running gateway at `url` with API key `key`.
 * Returns {scene, records, seconds}: scene is the fire_smoke entry of the scene list and each record
 * is {id, file, gts, fire: [{box, score}], smoke: [...]}, boxes in image pixels.
 */
async function detectThroughService({ url, key, sharedDir, limit = 0, log = () => {} }) {
  const sharp = require('sharp');
  const auth = { authorization: `Bearer ${key}` };
  const list = await (await fetch(`${url}/api/op/v1/scenes`, { headers: auth })).json();
  const scenes = Array.isArray(list) ? list : (list.scenes ?? list.data ?? []);
  const scene = scenes.find((s) => s.scene_code === 'fire_smoke');
  log(`fire_smoke scene: ${JSON.stringify(scene)}`);
  let images = loadDfire(path.join(sharedDir, 'datasets/dfire-valid'));
  if (limit) images = images.slice(0, limit);
  const records = [];
  const t0 = Date.now();
  for (let i = 0; i < images.length; i += 10) {
    const batch = images.slice(i, i + 10);
    const form = new FormData();
    form.append('scene_code', 'fire_smoke');
    for (const im of batch) form.append('files', new Blob([fs.readFileSync(im.path)]), im.file);
    const res = await fetch(`${url}/v1/vision/image-detections`, {
      method: 'POST',
      headers: { ...auth, 'idempotency-key': randomUUID() },
      body: form,
    });
    const body = await res.json();
    if (res.status !== 201) throw new Error(`image endpoint answered ${res.status}: ${JSON.stringify(body)}`);
    for (const [k, im] of batch.entries()) {
      const entry = body.results[k];
      if (entry.status !== 'succeeded') throw new Error(`${im.file}: ${JSON.stringify(entry)}`);
      const { width, height } = await sharp(im.path).metadata();
      const toBox = (b) => ({
        x1: (b.cx - b.width / 2) * width,
        y1: (b.cy - b.height / 2) * height,
        x2: (b.cx + b.width / 2) * width,
        y2: (b.cy + b.height / 2) * height,
      });
      const objs = entry.objects ?? [];
      records.push({
        ...im,
        fire: objs.filter((o) => o.label === 'fire').map((o) => ({ box: toBox(o.bbox), score: o.score })),
        smoke: objs.filter((o) => o.label === 'smoke').map((o) => ({ box: toBox(o.bbox), score: o.score })),
      });
    }
  }
  return { scene, records, seconds: (Date.now() - t0) / 1000 };
}

/** The fire_smoke objects the service returns for each image of ../shared/media/images. */
async function detectMedia({ url, key, sharedDir }) {
  const dir = path.join(sharedDir, 'media/images');
  const out = [];
  for (const file of fs.readdirSync(dir).sort()) {
    const form = new FormData();
    form.append('scene_code', 'fire_smoke');
    form.append('files', new Blob([fs.readFileSync(path.join(dir, file))]), file);
    const res = await fetch(`${url}/v1/vision/image-detections`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID() },
      body: form,
    });
    const body = await res.json();
    const entry = body.results?.[0];
    out.push({ file, status: entry?.status ?? res.status, objects: entry?.objects ?? [] });
  }
  return out;
}

/** Image-level precision/recall at bounds from `from` up, and the best recall with precision >= minP. */
function operatingPoints(records, from, minP = 0.9) {
  const rows = [];
  for (let lb = Math.ceil(from * 20) / 20; lb <= 0.951; lb += 0.05) {
    const b = Math.max(from, Math.round(lb * 100) / 100);
    rows.push({ lowerBound: b, ...evaluate(records, (c) => c.score, b) });
  }
  const ok = rows.filter((r) => r.precision >= minP);
  const best = ok.reduce((a, r) => (a && a.recall >= r.recall ? a : r), undefined);
  return { rows, bestAtPrecision: best };
}

function fmt(r) {
  return `P=${r.precision.toFixed(3)} R=${r.recall.toFixed(3)} (tp=${r.tp} fp=${r.fp} fn=${r.fn} tn=${r.tn}) AP50=${r.ap50.toFixed(3)}`;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const sharedDir = process.env.VISION_SHARED_DIR ?? path.resolve(repoRoot, '../shared');
  const stack = await startEvalStack({ sharedDir, ...args });
  let out;
  try {
    out = await detectThroughService({ ...stack, sharedDir, limit: args.limit, log: console.log });
    if (args.media)
      for (const m of await detectMedia({ ...stack, sharedDir })) {
        const objs = m.objects.map((o) => `${o.label} ${o.score.toFixed(2)}`).join(', ');
        console.log(`media ${m.file}: ${m.status === 'succeeded' ? objs || '(none)' : m.status}`);
      }
  } finally {
    await stack.close();
  }
  const { scene, records, seconds } = out;
  const lb = scene.lower_bound;
  const atBound = evaluate(records, (c) => c.score, lb);
  const smokeImages = records.filter((r) => r.smoke.length).length;
  console.log(
    `${records.length} images through the image endpoint in ${seconds.toFixed(1)} s, engine ${scene.engine}`,
  );
  console.log(`fire at the scene lower bound ${lb}: ${fmt(atBound)} gtBoxes=${atBound.gtBoxes}`);
  const { rows, bestAtPrecision } = operatingPoints(records, lb);
  for (const r of rows)
    console.log(`  fire @${r.lowerBound.toFixed(2)}: P=${r.precision.toFixed(3)} R=${r.recall.toFixed(3)}`);
  if (bestAtPrecision)
    console.log(
      `best image recall at precision >= 0.9: ${bestAtPrecision.recall.toFixed(3)} @${bestAtPrecision.lowerBound}`,
    );
  console.log(`images with a smoke detection: ${smokeImages} (no smoke labels in dfire-valid)`);
  if (args.json)
    fs.writeFileSync(
      args.json,
      JSON.stringify({ scene, atBound, rows, bestAtPrecision, smokeImages }, null, 2),
    );
}

module.exports = { startEvalStack, detectThroughService, operatingPoints };

if (require.main === module)
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
