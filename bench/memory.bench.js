/**
 * Resident memory of the standalone process (`npm start`), the small box's budget. Run after `npm run build`:
 *
 *   node bench/memory.bench.js
 *   bash -c 'source scripts/stack/session.sh && node bench/memory.bench.js --distributed'
 *
 * Starts `npm start`'s entry point as a child process on free ports and a fresh data directory, and reads its RSS
 * (VmRSS, the median of five samples a second apart, from 5 s after it printed that it is up):
 * 1. idle after a first start (an empty data directory: migrations, the development key);
 * 2. after both models served: one image detection for `person_vehicle` (the COCO model) and one for
 *    `fire_smoke` (the fire model);
 * 3. idle after a restart on the same data directory.
 * Targets: idle after a first start and after a restart <= 700 MB; after both models served <= 900 MB.
 * With --distributed it also starts the six services of the distributed mode as child processes on the servers of
 * scripts/stack (scripts/distributed/launcher.js; run it inside scripts/stack/session.sh, as above) and prints each
 * one's idle RSS and their sum, for comparison (no target).
 * Ends with `targets: N met, M missed`.
 */
const { randomUUID } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('./lib/args');
const { startStandaloneChild } = require('./lib/standalone-child');
const { report } = require('./lib/targets');

const root = path.resolve(__dirname, '..');
const SHARED_DIR = process.env.VISION_SHARED_DIR ?? path.resolve(root, '../shared');
const KEY = 'bench-memory-0123456789abcdef';
const IDLE_LIMIT_MB = 700;
const MODELS_LIMIT_MB = 900;
const IMAGES = {
  person_vehicle: 'media/images/street_people_car_coco9891.jpg',
  fire_smoke: 'media/images/fire_smoke_forest_dfire_pd01323.jpg',
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const args = parseArgs(process.argv.slice(2));

/** VmRSS of a process in MB. */
function rssOf(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** The distributed mode's six services, idle after their start: RSS of each and their sum. */
async function distributedRss() {
  const { Deployment, SERVICES } = require('../scripts/distributed/launcher');
  const deployment = await new Deployment({
    runtime: 'process',
    env: { VISION_MODELS_DIR: process.env.VISION_MODELS_DIR ?? path.join(SHARED_DIR, 'models') },
  }).start();
  try {
    await sleep(9000);
    const figures = SERVICES.map((name) => [name, rssOf(deployment.proc(name).child.pid)]);
    for (const [name, mb] of figures) console.log(`distributed ${name}: ${mb.toFixed(0)} MB`);
    console.log(
      `distributed, the six together: ${figures.reduce((sum, [, mb]) => sum + mb, 0).toFixed(0)} MB`,
    );
  } finally {
    await deployment.close();
  }
}

/** The median of five RSS samples, a second apart. */
async function settledRss(svc) {
  const samples = [];
  for (let i = 0; i < 5; i++) {
    await sleep(1000);
    samples.push(svc.rssMb());
  }
  return samples.sort((a, b) => a - b)[2];
}

async function detect(url, scene) {
  const f = new FormData();
  f.append('scene_code', scene);
  f.append('files', new Blob([fs.readFileSync(path.join(SHARED_DIR, IMAGES[scene]))]), 'image.jpg');
  const res = await fetch(`${url}/v1/vision/image-detections`, {
    method: 'POST',
    body: f,
    headers: { authorization: `Bearer ${KEY}`, 'idempotency-key': randomUUID() },
  });
  const body = await res.json();
  if (res.status !== 201 || body.results?.[0]?.status !== 'succeeded')
    throw new Error(`${scene}: ${res.status} ${JSON.stringify(body)}`);
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'memory-bench-'));
  const env = {
    VISION_DATA_DIR: dataDir,
    VISION_MODELS_DIR: process.env.VISION_MODELS_DIR ?? path.join(SHARED_DIR, 'models'),
    VISION_API_KEYS: `${KEY}:bench-memory`,
  };
  try {
    let svc = await startStandaloneChild(env);
    await sleep(4000);
    const firstIdle = await settledRss(svc);
    console.log(`idle after a first start: ${firstIdle.toFixed(0)} MB`);
    await detect(svc.url, 'person_vehicle');
    await detect(svc.url, 'fire_smoke');
    const served = await settledRss(svc);
    console.log(`after both models served: ${served.toFixed(0)} MB`);
    svc.stop();
    await sleep(3000);
    svc = await startStandaloneChild(env);
    await sleep(4000);
    const restartIdle = await settledRss(svc);
    console.log(`idle after a restart: ${restartIdle.toFixed(0)} MB`);
    svc.stop();
    if (args.distributed) await distributedRss();
    const mb = (x) => x.toFixed(0);
    const { missed } = report([
      {
        name: 'idle RSS after a first start (MB)',
        value: mb(firstIdle),
        limit: `<= ${IDLE_LIMIT_MB}`,
        ok: firstIdle <= IDLE_LIMIT_MB,
      },
      {
        name: 'RSS after both models served (MB)',
        value: mb(served),
        limit: `<= ${MODELS_LIMIT_MB}`,
        ok: served <= MODELS_LIMIT_MB,
      },
      {
        name: 'idle RSS after a restart (MB)',
        value: mb(restartIdle),
        limit: `<= ${IDLE_LIMIT_MB}`,
        ok: restartIdle <= IDLE_LIMIT_MB,
      },
    ]);
    process.exitCode = missed > 0 ? 1 : 0;
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
