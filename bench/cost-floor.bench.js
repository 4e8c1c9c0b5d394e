/* global performance */
/**
 * The least a distributed image call can cost beside the model: the work SPEC.md requires of it, each piece measured
 * alone with the libraries and servers the services use, against what the cost bench's targets leave beside the raw
 * pipeline (bench/cost.bench.js). Run after `npm run build`, on the servers of scripts/stack:
 *
 *   bash scripts/bench-distributed.sh cost-floor [--reps 3] [--statements 4] [--messages 1] [--hops 2.5]
 *
 * After one unmeasured round of each piece (the servers warm up too), each of --reps rounds measures the raw pipeline
 * of bench/lib/limits.js (its CPU per image, sequential and overlapped), then each piece over the cost bench's ten
 * images, counting the CPU (utime + stime, bench/lib/proc-cpu.js) of every process it involves:
 * - hop: an image posted with undici (as ServiceClient does) to a node:http server in a child process that reads the
 *   body whole and answers a short JSON; both processes. An image of a call crosses 2.5 such hops in a deployment:
 *   the gateway reads it (half a hop), sends it on to images (one), images sends it to inference (one).
 * - relay: an image written to the S3 server through MinioObjectStore (as images relays it); this process and the
 *   server.
 * - statement: an INSERT of one row (about 1 KB of JSON, a call's results) on a pooled knex connection; this
 *   process and Postgres.
 * - message: a message of about 300 bytes published by one KafkaBus and handled by another's subscription, one at a
 *   time; this process and the broker.
 * - idle: Postgres's, Kafka's and the S3 server's CPU per second with nothing sent, subtracted from the pieces above
 *   and counted apart, over the time the raw pipeline takes per image.
 * A call's floor per image: hops x hop + relay + (statements x statement + messages x message) / images per call +
 * idle x the raw pipeline's time per image. --statements and --messages say what a call must write and publish at
 * least: the claim of its Idempotency-Key, its results (with the event's outbox row), the quota's charge and the task's
 * record; the event. The floor is also printed with the design's own counts (at most 14 statements and 3 messages a
 * call, test/standalone/statements-per-call.test.ts). Targets: the floor within what each cost target leaves beside the
 * pipeline, 0.2 x the overlapped raw pipeline's CPU per image for calls of ten and 0.35 x the sequential one's for one
 * image per call. A missed target here means the cost target cannot be met on this machine by the services alone.
 * Ends with `targets: N met, M missed`. Compare figures only within a run: the machine is shared.
 */
'use strict';
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');

const root = path.resolve(__dirname, '..');
const { parseArgs } = require('./lib/args');
const { TEN_IMAGES } = require('./lib/detection-calls');
const limits = require('./lib/limits');
const { treesCpuMs, runningPid } = require('./lib/proc-cpu');
const { startHop, startRelay, startStatements, startMessages } = require('./lib/floor-pieces');
const { readStackEnv } = require(path.join(root, 'scripts/distributed/stack-servers.js'));
const { STACK_DIR } = require(path.join(root, 'scripts/distributed/launcher.js'));

const args = parseArgs(process.argv.slice(2));
const REPS = Number(args.reps ?? 3);
const STATEMENTS = Number(args.statements ?? 4);
const MESSAGES = Number(args.messages ?? 1);
const HOPS = Number(args.hops ?? 2.5);
const DESIGN = { statements: 14, messages: 3 };
const SHARED_DIR = process.env.VISION_SHARED_DIR ?? path.resolve(root, '../shared');
const MODELS_DIR = process.env.VISION_MODELS_DIR ?? path.join(SHARED_DIR, 'models');
const IMAGES = TEN_IMAGES.map((n) => fs.readFileSync(path.join(SHARED_DIR, 'media/images', n)));
const SERVERS = ['postgres', 'kafka', 's3'];
const ms = (x) => `${x.toFixed(2)} ms`;

function serverPids() {
  return Object.fromEntries(
    SERVERS.map((s) => {
      const pid = runningPid(path.join(STACK_DIR, 'run', `${s}.pid`));
      if (pid === undefined) throw new Error(`the stack's ${s} is not running (scripts/stack/start.sh)`);
      return [s, pid];
    }),
  );
}

/** CPU ms of this process, and of each server, over `run`, less the servers' idle over its length; per `n`. */
async function measure(pids, idle, n, run) {
  const pidList = Object.values(pids);
  const s0 = treesCpuMs(pidList);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const extra = (await run()) ?? 0;
  const seconds = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const s1 = treesCpuMs(pidList);
  const servers = {};
  for (const [name, pid] of Object.entries(pids))
    servers[name] = Math.max(0, s1[pid] - s0[pid] - idle[name] * seconds) / n;
  const self = ((c.user + c.system) / 1000 + extra) / n;
  return { self, servers, total: self + Object.values(servers).reduce((a, b) => a + b, 0) };
}

/** Each server's CPU ms per second over `seconds` with nothing sent. */
async function idleRates(pids, seconds = 3) {
  const s0 = treesCpuMs(Object.values(pids));
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const s1 = treesCpuMs(Object.values(pids));
  return Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, (s1[pid] - s0[pid]) / seconds]));
}

const median = limits.median;

async function main() {
  const env = readStackEnv();
  const pids = serverPids();
  const model = await limits.loadModel(MODELS_DIR);
  const raw = new limits.RawLimits(model, IMAGES);
  await raw.warmUp();
  const pieces = {};
  const starts = { hop: startHop, relay: startRelay, statement: startStatements, message: startMessages };
  // Counts per round: per image for the hop and the relay, per statement and per message for the others.
  const plan = {
    hop: [5, 5 * IMAGES.length],
    relay: [5, 5 * IMAGES.length],
    statement: [200, 200],
    message: [60, 60],
  };
  const rounds = [];
  try {
    for (const [name, start] of Object.entries(starts)) pieces[name] = await start(env, IMAGES);
    // One unmeasured round of each first: the servers' code warms up too (Kafka's broker is a JVM).
    for (const [name, piece] of Object.entries(pieces)) await piece.round(plan[name][0]);
    for (let r = 0; r < REPS; r++) {
      await raw.round();
      const idle = await idleRates(pids);
      const got = { idle };
      for (const [name, piece] of Object.entries(pieces)) {
        const [times, n] = plan[name];
        got[name] = await measure(pids, idle, n, () => piece.round(times));
      }
      rounds.push(got);
    }
  } finally {
    for (const piece of Object.values(pieces)) await piece.close().catch(() => undefined);
    await model.close();
  }
  const pipe = raw.summary();
  const med = (pick) => median(rounds.map(pick));
  const piece = (name) => med((r) => r[name].total);
  const idle = Object.fromEntries(SERVERS.map((s) => [s, med((r) => r.idle[s])]));
  const idlePerS = Object.values(idle).reduce((a, b) => a + b, 0);

  console.log(
    `cost floor (distributed, each piece alone): ${REPS} rounds; cpus ${os.cpus().length}, load average ` +
      os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' '),
  );
  console.log(
    `raw pipeline CPU per image: sequential ${ms(pipe.sequentialCpu)}, overlapped ${ms(pipe.overlappedCpu)}; ` +
      `time per image: sequential ${ms(pipe.sequential)}, overlapped ${ms(pipe.overlapped)}`,
  );
  console.log('each piece, CPU of every process it involves, median of the rounds:');
  const parts = (name) =>
    [`this process ${ms(med((r) => r[name].self))}`]
      .concat(
        Object.keys(rounds[0][name].servers)
          .filter((s) => med((r) => r[name].servers[s]) >= 0.005)
          .map((s) => `${s} ${ms(med((r) => r[name].servers[s]))}`),
      )
      .join(', ');
  console.log(
    `  hop, an image over HTTP          ${ms(piece('hop'))}  (${parts('hop')}; the server's side counted in this process)`,
  );
  console.log(`  relay, an image to the S3 server ${ms(piece('relay'))}  (${parts('relay')})`);
  console.log(`  statement, an INSERT             ${ms(piece('statement'))}  (${parts('statement')})`);
  console.log(`  message, published and handled   ${ms(piece('message'))}  (${parts('message')})`);
  console.log(`  idle, ms per second: ${SERVERS.map((s) => `${s} ${idle[s].toFixed(1)}`).join(', ')}`);

  /** The floor per image of a call of `images` images that runs `statements` statements and `messages` messages. */
  const floor = (images, statements, messages, timePerImage) => {
    const hops = HOPS * piece('hop');
    const perCall = (statements * piece('statement') + messages * piece('message')) / images;
    const idleShare = (idlePerS * timePerImage) / 1000;
    return {
      hops,
      relay: piece('relay'),
      perCall,
      idleShare,
      all: hops + piece('relay') + perCall + idleShare,
    };
  };
  const checks = [];
  for (const [title, images, cpu, time, share] of [
    ['calls of 10', 10, pipe.overlappedCpu, pipe.overlapped, 0.2],
    ['one image per call', 1, pipe.sequentialCpu, pipe.sequential, 0.35],
  ]) {
    const least = floor(images, STATEMENTS, MESSAGES, time);
    const designed = floor(images, DESIGN.statements, DESIGN.messages, time);
    const room = share * cpu;
    console.log(
      `${title}: floor per image ${ms(least.all)} = ${HOPS} hops ${ms(least.hops)} + relay ${ms(least.relay)} + ` +
        `(${STATEMENTS} statements, ${MESSAGES} messages) / ${images} ${ms(least.perCall)} + ` +
        `servers' idle ${ms(least.idleShare)}; with the design's ${DESIGN.statements} and ${DESIGN.messages} ` +
        `${ms(designed.all)}; the target leaves ${share} x ${ms(cpu)} = ${ms(room)}`,
    );
    checks.push({
      name: `${title}, floor per image / what the cost target leaves beside the pipeline`,
      value: (least.all / room).toFixed(2),
      limit: '<= 1',
      ok: least.all <= room,
    });
  }
  limits.report(checks);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
