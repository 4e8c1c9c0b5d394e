/* global performance */
/**
 * What a deployment spends per image, process by process, against the raw pipeline measured in the same run.
 * Run after `npm run build`:
 *
 *   node bench/cost.bench.js [--reps 3] [--calls 4] [--profile DIR]                              standalone
 *   bash scripts/bench-distributed.sh cost --distributed [--reps 3] [--calls 4] [--profile DIR] [--scraped]
 *                                                                                               distributed
 *
 * Standalone: the one process of `npm start` in a child of the bench (the client's CPU is the bench's, not counted),
 * broken down by thread. Distributed: one replica of each service (scripts/distributed) on the servers of
 * scripts/stack, each service and each server (Postgres, Kafka, Redis, the S3 server) counted with its descendants;
 * Jaeger and Prometheus, when they run, are printed apart and left out of the total. The stack's Prometheus scrapes
 * the services only with --scraped (every second, for the tests; a deployment's 15 s or 30 s cost a fifteenth or less).
 * CPU is utime + stime of /proc/<pid>/stat (bench/lib/proc-cpu.js) over each phase, divided by the images sent.
 * Each of --reps rounds: the raw pipeline of bench/lib/limits.js in the bench's process (decode, letterbox, model;
 * its CPU per image sequential and overlapped), then --calls calls of the ten images one after the other, then ten
 * times --calls calls of one image one after the other, then --idle-s seconds (3) with no call, whose CPU per second
 * is printed apart (each workload's figures include it over their length). With the CPU, each workload prints the
 * statements each service sent to its database and the messages it published, per call (bench/lib/statements.js; the
 * idle loops' included, as the idle line's per second shows; test/standalone/statements-per-call.test.ts counts a
 * call's own exactly). Distributed, only when the services run as processes. Targets, per round then the median: the deployment's CPU
 * per image in calls of ten <= 1.2 x the overlapped raw pipeline's, in calls of one <= 1.35 x the sequential one's.
 * Ends with `targets: N met, M missed`. Compare figures only within a run: the machine is shared.
 */
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');

const root = path.resolve(__dirname, '..');
const { parseArgs } = require('./lib/args');
const { TEN_IMAGES, encodeDetection, postDetection } = require('./lib/detection-calls');
const limits = require('./lib/limits');
const { treesCpuMs, threadsCpuMs, delta, runningPid } = require('./lib/proc-cpu');
const { statementCounting, printCounts } = require('./lib/statements');

const args = parseArgs(process.argv.slice(2));
const REPS = Number(args.reps ?? 3);
const CALLS = Number(args.calls ?? 4);
const IDLE_S = Number(args['idle-s'] ?? 3);
const DISTRIBUTED = args.distributed === 'true';
// Distributed: whether the stack's Prometheus scrapes the services (every second, as the tests need). A deployment
// scrapes every 15 s (compose) or 30 s (the chart), and the standalone child is not scraped: off unless --scraped.
const SCRAPED = args.scraped === 'true';
// --profile DIR: every service process writes a CPU profile of each of its threads there when it stops
// (`node --cpu-prof`; bench/profile-summary.js reads them). The whole run, start-up included.
const PROFILE_DIR = args.profile ? path.resolve(args.profile) : undefined;
const NODE_ARGS = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
// The services' statements and messages: counted in each service process (a preloaded module), which the
// containers of VISION_DEPLOYMENT_RUNTIME=container cannot load.
const COUNTING =
  (process.env.VISION_DEPLOYMENT_RUNTIME ?? 'process') === 'process' ? statementCounting() : undefined;
const COUNT_ARGS = COUNTING ? COUNTING.nodeArgs : [];
const SHARED_DIR = process.env.VISION_SHARED_DIR ?? path.resolve(root, '../shared');
const MODELS_DIR = process.env.VISION_MODELS_DIR ?? path.join(SHARED_DIR, 'models');
const IMAGES_DIR = path.join(SHARED_DIR, 'media/images');
const NAMES = TEN_IMAGES;
const IMAGES = NAMES.map((n) => fs.readFileSync(path.join(IMAGES_DIR, n)));
const API_KEY = 'bench-cost-key-0123456789';
const SERVICE_ENV = {
  VISION_MODELS_DIR: MODELS_DIR,
  ...limits.serviceEnv(),
  QUOTA_IMAGE_DAILY: '1000000',
  GATEWAY_QPS: '1000',
  GATEWAY_BURST: '1000',
};
const STACK_SERVERS = ['postgres', 'kafka', 'redis', 's3'];
const OBSERVABILITY = ['jaeger', 'prometheus'];

const encode = (indices) => encodeDetection(IMAGES, NAMES, indices);
const post = (url, form) => postDetection(url, API_KEY, form);

/** The deployment under test: its gateway's URL, `snapshot()` (CPU ms by process, and by thread where known), `close()`. */
async function startStandalone() {
  const { startStandaloneChild } = require('./lib/standalone-child');
  const startedAt = performance.now();
  const child = await startStandaloneChild(
    { ...SERVICE_ENV, ...COUNTING?.env, VISION_API_KEYS: `${API_KEY}:bench` },
    [...NODE_ARGS, ...COUNT_ARGS],
  );
  const pid = child.pid;
  return {
    startedAt,
    pids: [pid],
    url: child.url,
    snapshot: () => ({
      processes: { standalone: treesCpuMs([pid])[pid] },
      threads: prefixed('', threadsCpuMs(pid)),
    }),
    close: async () => {
      child.stop();
      // A profile is written as the process ends.
      for (let i = 0; i < 300 && fs.existsSync(`/proc/${pid}/stat`); i++)
        await new Promise((r) => setTimeout(r, 100));
    },
  };
}

async function startDistributed() {
  const { Deployment, SERVICES, STACK_DIR } = require(path.join(root, 'scripts/distributed/launcher.js'));
  const nodeOptions = [...NODE_ARGS, ...COUNT_ARGS].join(' ');
  const env = { ...SERVICE_ENV, ...COUNTING?.env, ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}) };
  const dep = new Deployment({ keys: `${API_KEY}:bench`, env, logLevel: 'warn', scraped: SCRAPED });
  const startedAt = performance.now();
  await dep.start();
  const pidOf = (name) => runningPid(path.join(STACK_DIR, 'run', `${name}.pid`));
  const services = SERVICES.flatMap((s) => dep.procs[s].map((p) => [dep.label(p), p.child.pid]));
  const named = [
    ...services,
    ...[...STACK_SERVERS, ...OBSERVABILITY].map((s) => [s, pidOf(s)]).filter(([, pid]) => pid !== undefined),
  ];
  return {
    startedAt,
    pids: services.map(([, pid]) => pid),
    url: dep.url,
    snapshot: () => {
      const cpu = treesCpuMs(named.map(([, pid]) => pid));
      const threads = services.map(([n, pid]) => prefixed(`${n} `, threadsCpuMs(pid)));
      return {
        processes: Object.fromEntries(named.map(([n, pid]) => [n, cpu[pid]])),
        threads: Object.assign({}, ...threads),
      };
    },
    close: () => dep.close(),
  };
}

/** `threads` with each name prefixed by `prefix` (the process's, in distributed mode). */
const prefixed = (prefix, threads) =>
  Object.fromEntries(Object.entries(threads).map(([k, v]) => [prefix + k, v]));

/**
 * CPU ms per image of each process (and thread) over `run`, which sends `images` images in `calls` calls, and the
 * statements and messages of each service per call (read outside the CPU's measure).
 */
async function phase(dep, images, calls, run) {
  const sa = COUNTING && (await COUNTING.read(dep.pids));
  const a = dep.snapshot();
  await run();
  const b = dep.snapshot();
  const sb = COUNTING && (await COUNTING.read(dep.pids));
  const per = (d, n = images) => Object.fromEntries(Object.entries(d).map(([k, v]) => [k, v / n]));
  return {
    processes: per(delta(a.processes, b.processes)),
    threads: a.threads && per(delta(a.threads, b.threads)),
    statements: sa && per(delta(sa.statements, sb.statements), calls),
    messages: sa && per(delta(sa.messages, sb.messages), calls),
  };
}

const ms = (x) => `${x.toFixed(1).padStart(6)} ms`;
const total = (p) => Object.entries(p).reduce((s, [k, v]) => s + (OBSERVABILITY.includes(k) ? 0 : v), 0);

/** Prints one workload's medians over the rounds, each process (and thread) with its share of the total. */
function show(title, rounds, rawPerRound) {
  const med = (pick) => limits.median(rounds.map(pick));
  const all = med((r) => total(r.processes));
  console.log(`${title}: CPU per image, median of ${rounds.length} rounds (share of the total)`);
  const line = (k, v) =>
    console.log(`  ${k.padEnd(22)} ${ms(v)}  ${((100 * v) / all).toFixed(0).padStart(3)} %`);
  const keys = (pick) => [...new Set(rounds.flatMap((r) => Object.keys(pick(r))))];
  const sorted = (pick) =>
    keys(pick)
      .map((k) => [k, med((r) => pick(r)[k] ?? 0)])
      .sort((x, y) => y[1] - x[1]);
  for (const [k, v] of sorted((r) => r.processes)) if (!OBSERVABILITY.includes(k)) line(k, v);
  const ratios = rounds.map((r, i) => total(r.processes) / rawPerRound[i]);
  console.log(
    `  ${'all'.padEnd(22)} ${ms(all)}  against the raw pipeline's ${ms(limits.median(rawPerRound)).trim()}: ` +
      `${ratios.map((x) => x.toFixed(2)).join(', ')} x by round`,
  );
  const obs = sorted((r) => r.processes).filter(([k]) => OBSERVABILITY.includes(k));
  if (obs.length)
    console.log(`  outside the total: ${obs.map(([k, v]) => `${k} ${v.toFixed(1)} ms`).join(', ')}`);
  printCounts(rounds, 'call');
  if (rounds[0].threads) {
    console.log('  by thread:');
    for (const [k, v] of sorted((r) => r.threads)) if (v >= 0.25) line(`  ${k}`, v);
  }
  return limits.median(ratios);
}

async function main() {
  const model = await limits.loadModel(MODELS_DIR);
  const raw = new limits.RawLimits(model, IMAGES);
  await raw.warmUp();
  const dep = DISTRIBUTED ? await startDistributed() : await startStandalone();
  const url = `${dep.url}/v1/vision/image-detections`;
  try {
    const batch = await encode(IMAGES.map((_, i) => i));
    const singles = await Promise.all(IMAGES.map((_, i) => encode([i])));
    const batches = [];
    const ones = [];
    const idles = [];
    const sendBatches = async () => {
      for (let c = 0; c < CALLS; c++) await post(url, batch);
    };
    const sendOnes = async () => {
      for (let c = 0; c < CALLS; c++) for (const s of singles) await post(url, s);
    };
    // Round -1 warms the deployment up (connections, compiled code, the model's sessions).
    let measuredFrom = 0;
    for (let r = -1; r < REPS; r++) {
      if (r === 0) measuredFrom = performance.now();
      if (r >= 0) await raw.round();
      const b = await phase(dep, CALLS * IMAGES.length, CALLS, sendBatches);
      const o = await phase(dep, CALLS * IMAGES.length, CALLS * IMAGES.length, sendOnes);
      // What each process spends with no call at all, per second (part of every figure above, by their length).
      const idle = await phase(
        dep,
        IDLE_S,
        IDLE_S,
        () => new Promise((done) => setTimeout(done, IDLE_S * 1000)),
      );
      if (r < 0) continue;
      batches.push(b);
      ones.push(o);
      idles.push(idle);
    }
    if (PROFILE_DIR)
      console.log(
        `profiles in ${PROFILE_DIR}: the measured rounds ran from about ${((measuredFrom - dep.startedAt) / 1000).toFixed(0)} s ` +
          `to ${((performance.now() - dep.startedAt) / 1000).toFixed(0)} s after the services started ` +
          '(bench/profile-summary.js --from-s --to-s)',
      );
    await model.close();
    const [l1, l5, l15] = os.loadavg();
    console.log(
      `cost bench (${DISTRIBUTED ? `distributed, ${SCRAPED ? 'scraped every second' : 'not scraped'}` : 'standalone'}): ` +
        `${REPS} rounds of ${CALLS} calls of ` +
        `${IMAGES.length} images and ${CALLS * IMAGES.length} calls of one; cpus ${os.cpus().length}, ` +
        `load average ${l1.toFixed(2)} ${l5.toFixed(2)} ${l15.toFixed(2)}`,
    );
    const pipe = raw.summary();
    console.log(
      `raw pipeline CPU per image (this process, all threads): sequential ${ms(pipe.sequentialCpu).trim()}, ` +
        `overlapped ${ms(pipe.overlappedCpu).trim()}`,
    );
    const batchRatio = show(`calls of ${IMAGES.length}`, batches, raw.overlapCpu);
    const oneRatio = show('one image per call', ones, raw.seqCpu);
    const idleOf = (pick) =>
      Object.keys(pick(idles[0]))
        .map((k) => [k, limits.median(idles.map((x) => pick(x)[k] ?? 0))])
        .filter(([, v]) => v >= 1)
        .sort((x, y) => y[1] - x[1]);
    const idle = idleOf((x) => x.processes);
    console.log(
      `idle, CPU ms per second (median of ${IDLE_S} s after each round): ` +
        idle.map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', '),
    );
    printCounts(idles, 'second');
    console.log(
      '  by thread: ' +
        idleOf((x) => x.threads)
          .map(([k, v]) => `${k} ${v.toFixed(1)}`)
          .join(', '),
    );
    limits.report([
      {
        name: `calls of ${IMAGES.length}, CPU per image / raw pipeline overlapped`,
        value: batchRatio.toFixed(2),
        limit: '<= 1.2',
        ok: batchRatio <= 1.2,
      },
      {
        name: 'one image per call, CPU per image / raw pipeline sequential',
        value: oneRatio.toFixed(2),
        limit: '<= 1.35',
        ok: oneRatio <= 1.35,
      },
    ]);
  } finally {
    await dep.close();
    COUNTING?.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
