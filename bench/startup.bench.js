/**
 * Start-up time of the standalone process. Run after `npm run build`:
 *
 *   node bench/startup.bench.js [--reps 3]
 *
 * Starts `npm start`'s entry point (apps/standalone/dist/main.js) as a child process on free ports,
 * from process start until it prints that it is up (every service ready, the gateway listening): once
 * on an empty data directory (the first start: migrations, the development key), then --reps times more
 * on the same directory (a second start). Target: a second start is ready within 10 s (the median of the
 * reps). Ends with `targets: N met, M missed`.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('./lib/args');
const { MAIN, freePort } = require('./lib/standalone-child');
const { report } = require('./lib/targets');

const root = path.resolve(__dirname, '..');
const args = parseArgs(process.argv.slice(2));
const REPS = Number(args.reps ?? 3);
const LIMIT_S = 10;
const SHARED_DIR = process.env.VISION_SHARED_DIR ?? path.resolve(root, '../shared');

/** Seconds from spawning the process to its "is up at" line; the process is stopped afterwards. */
async function timeStart(dataDir) {
  const env = {
    ...process.env,
    VISION_DATA_DIR: dataDir,
    VISION_MODELS_DIR: process.env.VISION_MODELS_DIR ?? path.join(SHARED_DIR, 'models'),
    PORT: String(await freePort()),
    METRICS_PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
  };
  const t0 = performance.now();
  const child = spawn(process.execPath, [MAIN], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const seconds = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c.toString();
      if (out.includes(' is up at ')) resolve((performance.now() - t0) / 1000);
    });
    child.once('exit', (code) => reject(new Error(`standalone exited with ${code}`)));
  });
  await new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.once('exit', resolve);
    child.kill('SIGTERM');
  });
  return seconds;
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-startup-'));
  try {
    const first = await timeStart(dataDir);
    console.log(`first start (empty data directory): ${first.toFixed(2)} s`);
    const again = [];
    for (let i = 0; i < REPS; i++) again.push(await timeStart(dataDir));
    again.sort((a, b) => a - b);
    const median = again[Math.floor(again.length / 2)];
    console.log(
      `second start, ${REPS} runs: ${again.map((s) => s.toFixed(2)).join(', ')} s; median ${median.toFixed(2)} s`,
    );
    const ratio = median / LIMIT_S;
    report([
      {
        name: `second start (median) / ${LIMIT_S} s`,
        value: ratio.toFixed(2),
        limit: '<= 1',
        ok: ratio <= 1,
      },
    ]);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
