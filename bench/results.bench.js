/* global setTimeout, performance */
/**
 * Results service benchmark. Run after `npm run build`:
 *
 *   node bench/results.bench.js [--frames 20000] [--tasks 8] [--readers 200] [--requests 4000]
 *                               [--only gateway] [--no-gateway] [--database-url postgres://...]
 *
 * 1. Ingest: the same frame rows are stored twice in one run and one database (PGlite, as in
 *    standalone mode): once by a raw bulk INSERT (4,000-row multi-row statements into a copy of the
 *    frames table), once by the results service's consumer draining them from an in-process bus
 *    filled beforehand (the producer's publishing is not timed). Prints frames/s of each and the
 *    ratio ingest/raw (target >= 0.5).
 *    With --database-url (a Postgres server, e.g. the one scripts/stack/start.sh runs), steps 1 and 2
 *    use a database of their own created there (and dropped afterwards) instead of PGlite.
 * 2. Reads: p50/p99 latency of 100-frame pages under N concurrent readers, issued directly to the
 *    results service (signed identity header, as the gateway sends).
 *
 * 3. Gateway overhead: unless --no-gateway, a whole standalone stack is started in this process and the
 *    same reads go directly to its results service and through its gateway: ratio p50/p99 (target <= 1.3).
 *    The two paths are measured in alternating rounds (--rounds 4: direct, gateway, gateway, direct, ...)
 *    and each path's latencies pooled, so that a change of machine speed during the run hits both alike.
 *
 * With --distributed, only the gateway overhead is measured, on a distributed deployment (one process
 * per service, Postgres, Kafka, Redis) that scripts/distributed starts on the servers of scripts/stack
 * (scripts/stack/install.sh && scripts/stack/start.sh first).
 *
 * Through the gateway of a stack started elsewhere (services started elsewhere, tasks with frames owned by the key's subject):
 *
 *   VISION_IDENTITY_DIR=... node bench/results.bench.js --results-url http://127.0.0.1:8103 \
 *     --gateway-url http://127.0.0.1:8080 --api-key KEY --subject SUBJECT --task-ids id1,id2
 *
 * measures the same reads directly and through the gateway and prints the overhead ratio p50/p99
 * (target <= 1.3). Latencies are measured from a client in this process; compare them only within
 * one run. Every way ends with `targets: N met, M missed`.
 */
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const shared = require(path.join(root, 'packages/shared/dist/index.js'));
const results = require(path.join(root, 'services/results/dist/index.js'));

const { parseArgs } = require('./lib/args');
const { useGrants, frameValue, taskCreated, endOf } = require('./lib/results-messages');
const { measureReads, measureAlternating } = require('./lib/read-load');
const gateway = require('./lib/results-gateway');
const { benchIdentityDir, signerOf } = require('./lib/identity');
const { report } = require('./lib/targets');

const args = parseArgs(process.argv.slice(2));
const num = (name, def) => (args[name] === undefined ? def : Number(args[name]));
const FRAMES = num('frames', 20_000);
const TASKS = num('tasks', 8);
const READERS = num('readers', 200);
const REQUESTS = num('requests', 4_000);
const PAGE = num('page', 100);
/** Alternating rounds of the direct and gateway reads (see measureAlternating). */
const ROUNDS = num('rounds', 4);
const IDENTITY_DIR = benchIdentityDir();
const SIGNER = signerOf(IDENTITY_DIR, 'gateway');
useGrants(shared, signerOf(IDENTITY_DIR, 'tasks'));
const SUBJECT = args.subject ?? 'bench-subject';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function benchIngest(svc, bus, knex) {
  const taskIds = Array.from({ length: TASKS }, (_, i) => `bench-task-${i}`);
  const perTask = Math.ceil(FRAMES / TASKS);
  const messages = [];
  for (let seq = 0; seq < perTask; seq++)
    for (const t of taskIds) messages.push({ key: t, value: frameValue(t, seq) });
  const total = messages.length;

  // Task events first, so the tasks are readable afterwards.
  await bus.publish(
    shared.TOPICS.taskEvents,
    taskIds.map((t) => taskCreated(t, SUBJECT)),
  );

  // Raw: the same rows, bulk-inserted into a table of the same shape and indexes.
  await knex.raw('CREATE TABLE result_frames_raw (LIKE result_frames INCLUDING ALL)');
  const rows = messages.map((m) =>
    results.toRow(results.toStoredFrame(results.frameMessageSchema.parse(m.value))),
  );
  const rawStart = performance.now();
  for (let i = 0; i < rows.length; i += 4000) await knex('result_frames_raw').insert(rows.slice(i, i + 4000));
  const rawMs = performance.now() - rawStart;
  await knex.raw('DROP TABLE result_frames_raw');

  // Ingest, from the bus into the database: every frame and end marker is on a bus first (the
  // producer's side, JSON copies included, is not timed: in distributed mode it is another process),
  // then the results service's own consumer (subscribeIngest: the same batch handlers, FrameWriter
  // and stores as in the running service, on its database) drains it; timed until every task's end
  // marker is stored (frames precede it per task).
  const framesBus = new shared.InProcessBus({ maxQueued: total + TASKS });
  for (let i = 0; i < messages.length; i += 1000)
    await framesBus.publish(shared.TOPICS.frames, messages.slice(i, i + 1000));
  await framesBus.publish(
    shared.TOPICS.frames,
    taskIds.map((t) => endOf(t, perTask)),
  );
  const clock = shared.systemClock;
  const logger = shared.createLogger('results-bench', { level: 'silent' });
  const ingestStart = performance.now();
  const subs = await results.subscribeIngest(framesBus, {
    frames: svc.frames,
    tasks: svc.tasks,
    writer: new results.FrameWriter(svc.frames, svc.tasks, clock),
    clock,
    logger,
    // As the service wires it: each batch asks which of its tasks have zones or lines (these have none).
    analytics: svc.analytics,
  });
  for (;;) {
    const row = await knex('result_tasks').whereNotNull('end_frames').count({ n: '*' }).first();
    if (Number(row.n) === TASKS) break;
    await sleep(5);
  }
  const ingestMs = performance.now() - ingestStart;
  await Promise.all(subs.map((sub) => sub.close()));
  await framesBus.close();
  const stored = await knex('result_frames').count({ n: '*' }).first();
  if (Number(stored.n) !== total) throw new Error(`expected ${total} stored frames, found ${stored.n}`);

  const rawFps = total / (rawMs / 1000);
  const ingestFps = total / (ingestMs / 1000);
  const ratio = ingestFps / rawFps;
  return { taskIds, total, rawFps, ingestFps, ratio };
}

/** The identity header of reader `i`'s request to `url`, bound to that request as the gateway binds it. */
const signed = (i, url) => {
  const { pathname, search } = new URL(url);
  return {
    [shared.IDENTITY_HEADER]: shared.signIdentity(
      SIGNER,
      { subject: SUBJECT, requestId: `bench-${i}` },
      'results',
      { method: 'GET', target: `${pathname}${search}` },
    ),
  };
};

/**
 * A database of its own on the Postgres server of `adminUrl` (created here, dropped afterwards), so
 * that the bench never touches a deployment's data.
 */
async function createBenchDatabase(adminUrl) {
  const { createDatabase, dropDatabase } = require(path.join(root, 'scripts/distributed/stack-servers.js'));
  const server = new URL(adminUrl);
  server.pathname = '';
  const serverUrl = server.toString().replace(/\/$/, '');
  const name = `results_bench_${process.pid}`;
  await createDatabase(serverUrl, name);
  return { url: `${serverUrl}/${name}`, drop: () => dropDatabase(serverUrl, name) };
}

const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : String(x));
/** What the gateway comparison (bench/lib/results-gateway.js) needs of this run. */
const settings = {
  root,
  shared,
  subject: SUBJECT,
  readers: READERS,
  requests: REQUESTS,
  rounds: ROUNDS,
  page: PAGE,
  fmt,
};
const benchGatewayOverhead = () => gateway.benchGatewayOverhead(settings);
const benchGatewayDistributed = () => gateway.benchGatewayDistributed(settings);
/** The targets of the gateway comparison: reads through the gateway within 1.3x of direct reads, p50 and p99. */
const gatewayTargets = ({ p50, p99 }) =>
  [
    ['p50', p50],
    ['p99', p99],
  ].map(([q, ratio]) => ({
    name: `results reads through the gateway / direct, ${q}`,
    value: fmt(ratio, 2),
    limit: '<= 1.3',
    ok: ratio <= 1.3,
  }));

async function main() {
  if (args['gateway-url']) {
    for (const need of ['results-url', 'api-key', 'task-ids'])
      if (!args[need]) throw new Error(`--gateway-url needs --${need}`);
    const taskIds = args['task-ids'].split(',');
    const common = { taskIds, readers: READERS, requests: REQUESTS, page: PAGE };
    const [direct, viaGateway] = await measureAlternating(
      { label: 'direct', baseUrl: args['results-url'], headers: signed, ...common },
      {
        label: 'gateway',
        baseUrl: args['gateway-url'],
        headers: () => ({ authorization: `Bearer ${args['api-key']}` }),
        ...common,
      },
      ROUNDS,
    );
    const p50 = viaGateway.p50_ms / direct.p50_ms;
    const p99 = viaGateway.p99_ms / direct.p99_ms;
    console.log(
      JSON.stringify({ bench: 'results.reads', direct, gateway: viaGateway, ratio_p50: p50, ratio_p99: p99 }),
    );
    console.log(
      `gateway overhead: p50 ratio ${fmt(p50, 2)}, p99 ratio ${fmt(p99, 2)} (target <= 1.3) ${p50 <= 1.3 && p99 <= 1.3 ? 'PASS' : 'FAIL'}`,
    );
    report(gatewayTargets({ p50, p99 }));
    return;
  }

  if (args.distributed === 'true') return void report(gatewayTargets(await benchGatewayDistributed()));
  if (args.only === 'gateway') return void report(gatewayTargets(await benchGatewayOverhead()));
  const checks = [];
  const logger = shared.createLogger('results-bench', { level: 'silent' });
  const bus = new shared.InProcessBus({ logger });
  const database = args['database-url'] ? await createBenchDatabase(args['database-url']) : undefined;
  const svc = await results.start({
    env: {
      VISION_IDENTITY_DIR: IDENTITY_DIR,
      VISION_DATA_DIR: ':memory:',
      ...(database ? { VISION_MODE: 'distributed', DATABASE_URL: database.url } : {}),
      RESULTS_JANITOR_INTERVAL_MS: '0',
      TASKS_URL: 'http://127.0.0.1:9',
      LOG_LEVEL: 'silent',
    },
    bus,
    logger,
    port: 0,
  });
  console.log(
    `database: ${database ? 'Postgres (a database of its own, dropped afterwards)' : 'PGlite in memory'}`,
  );
  try {
    const ingest = await benchIngest(svc, bus, svc.db.knex);
    console.log(JSON.stringify({ bench: 'results.ingest', ...ingest, taskIds: undefined }));
    console.log(
      `ingest: ${ingest.total} frames, bus->db ${fmt(ingest.ingestFps, 0)} frames/s, raw bulk insert ${fmt(ingest.rawFps, 0)} frames/s, ratio ${fmt(ingest.ratio, 2)} (target >= 0.5) ${ingest.ratio >= 0.5 ? 'PASS' : 'FAIL'}`,
    );
    checks.push({
      name: 'results ingest, bus -> database / raw bulk INSERT',
      value: fmt(ingest.ratio, 2),
      limit: '>= 0.5',
      ok: ingest.ratio >= 0.5,
    });
    await svc.janitor.runOnce(); // as in steady state: refreshes planner statistics
    const reads = await measureReads({
      label: 'direct',
      baseUrl: svc.url,
      headers: signed,
      taskIds: ingest.taskIds,
      readers: READERS,
      requests: REQUESTS,
      page: PAGE,
    });
    console.log(JSON.stringify({ bench: 'results.reads', readers: READERS, page: PAGE, ...reads }));
    console.log(
      `reads (direct, ${READERS} concurrent readers, ${PAGE}-frame pages): p50 ${fmt(reads.p50_ms)} ms, p99 ${fmt(reads.p99_ms)} ms, ${fmt(reads.pages_per_s, 0)} pages/s, ${reads.errors} errors`,
    );
    if (reads.errors > 0) process.exitCode = 1;
  } finally {
    await svc.close();
    await bus.close();
    if (database) await database.drop();
  }
  if (args['no-gateway'] !== 'true') checks.push(...gatewayTargets(await benchGatewayOverhead()));
  report(checks);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
