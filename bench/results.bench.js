/* global setTimeout, performance, fetch, URLSearchParams */
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
 *   INTERNAL_SECRET=... node bench/results.bench.js --results-url http://127.0.0.1:8103 \
 *     --gateway-url http://127.0.0.1:8080 --api-key KEY --subject SUBJECT --task-ids id1,id2
 *
 * measures the same reads directly and through the gateway and prints the overhead ratio p50/p99
 * (target <= 1.3). Latencies are measured from a client in this process; compare them only within
 * one run.
 */
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const shared = require(path.join(root, 'packages/shared/dist/index.js'));
const results = require(path.join(root, 'services/results/dist/index.js'));

const { parseArgs } = require('./lib/args');

const args = parseArgs(process.argv.slice(2));
const num = (name, def) => (args[name] === undefined ? def : Number(args[name]));
const FRAMES = num('frames', 20_000);
const TASKS = num('tasks', 8);
const READERS = num('readers', 200);
const REQUESTS = num('requests', 4_000);
const PAGE = num('page', 100);
/** Alternating rounds of the direct and gateway reads (see measureAlternating). */
const ROUNDS = num('rounds', 4);
const SECRET = process.env.INTERNAL_SECRET ?? 'bench-internal-secret-0123456789';
const SUBJECT = args.subject ?? 'bench-subject';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function frameValue(taskId, seq) {
  const objects = [];
  for (let i = 0; i < 1 + (seq % 4); i++)
    objects.push({
      label: i % 2 ? 'car' : 'person',
      score: 0.3 + ((seq * 7 + i * 13) % 70) / 100,
      bbox: { format: 'cxcywh_normalized', cx: 0.5, cy: 0.4, width: 0.1, height: 0.2 },
      track_id: String(i + 1),
    });
  return {
    schema: 1,
    type: 'frame',
    event_id: `${taskId}:${seq}`,
    task_id: taskId,
    seq,
    frame_id: `${taskId}-${seq}`,
    frame_time_ms: 1_767_225_600_000 + seq * 200,
    image: { width: 1280, height: 720 },
    objects,
    lower_bound: 0.3,
  };
}

/** The task.created event that makes a bench task readable by SUBJECT. */
function taskCreated(taskId) {
  return {
    key: taskId,
    value: {
      schema: 1,
      event_id: `ev-${taskId}`,
      type: 'task.created',
      task_id: taskId,
      subject: SUBJECT,
      kind: 'video',
      scene_code: 'person_vehicle',
      status: 'succeeded',
      business_threshold: 0.8,
      lower_bound: 0.3,
      result_expires_at: new Date(Date.now() + 90 * 86_400_000).toISOString(),
      occurred_at: new Date().toISOString(),
    },
  };
}

/** The end marker after a bench task's last frame. */
function endOf(taskId, frames) {
  return {
    key: taskId,
    value: {
      schema: 1,
      type: 'end',
      event_id: `${taskId}:end`,
      task_id: taskId,
      seq: frames,
      frames,
      status: 'succeeded',
    },
  };
}

async function benchIngest(svc, bus, knex) {
  const taskIds = Array.from({ length: TASKS }, (_, i) => `bench-task-${i}`);
  const perTask = Math.ceil(FRAMES / TASKS);
  const messages = [];
  for (let seq = 0; seq < perTask; seq++)
    for (const t of taskIds) messages.push({ key: t, value: frameValue(t, seq) });
  const total = messages.length;

  // Task events first, so the tasks are readable afterwards.
  await bus.publish(shared.TOPICS.taskEvents, taskIds.map(taskCreated));

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

/** Runs `requests` page reads with `readers` concurrent clients; each reader pages through a task and starts over. */
const http = require('node:http');

/**
 * The readers' HTTP client: node's http with one keep-alive connection per reader. (undici's fetch
 * pool hands freed connections to whichever request comes next, which starved some readers for the
 * whole run and made the percentiles measure the client's scheduling, not the service.)
 */
const readerAgent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
function getJson(url, headers) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: readerAgent, headers }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
          } catch (err) {
            reject(err);
          }
        });
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

async function measureReads({ label, baseUrl, headers, taskIds, readers, requests }) {
  // Unmeasured warm-up pages: 2 per reader, in the same loop, with no pause before the measured ones.
  const warmup = readers * 2;
  const latencies = [];
  let issued = 0;
  let errors = 0;
  let start = 0;
  async function reader(i) {
    const taskId = taskIds[i % taskIds.length];
    let cursor = '';
    while (issued < warmup + requests) {
      const measured = issued >= warmup;
      if (issued === warmup) start = performance.now();
      issued++;
      const qs = new URLSearchParams({ limit: String(PAGE) });
      if (cursor) qs.set('cursor', cursor);
      const t0 = performance.now();
      const { status, body } = await getJson(
        `${baseUrl}/v1/vision/tasks/${encodeURIComponent(taskId)}/results?${qs}`,
        headers(i),
      );
      if (measured) latencies.push(performance.now() - t0);
      if (status !== 200) {
        errors++;
        cursor = '';
        continue;
      }
      cursor = body.next_cursor;
    }
  }
  // Warm-up: every reader opens its connection with one page, then the readers run the warm-up pages
  // and go straight on with the measured ones, so that every connection on the path (the client's, and
  // the gateway's pooled ones to the results service, which grow with the load) exists and the readers
  // are out of step before timing starts. Client and server share this process, and a busy Node
  // server accepts new connections slowly: without this the figures would measure connection set-up
  // and the start-line burst rather than page reads.
  await Promise.all(
    Array.from({ length: readers }, async (_, i) => {
      const taskId = taskIds[i % taskIds.length];
      await getJson(`${baseUrl}/v1/vision/tasks/${encodeURIComponent(taskId)}/results?limit=1`, headers(i));
    }),
  );
  await Promise.all(Array.from({ length: readers }, (_, i) => reader(i)));
  const wallMs = performance.now() - start;
  return summarise(label, latencies, errors, wallMs);
}

function summarise(label, latencies, errors, wallMs) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const out = {
    label,
    requests: sorted.length,
    errors,
    mean_ms: sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length),
    p50_ms: percentile(sorted, 50),
    p99_ms: percentile(sorted, 99),
    pages_per_s: sorted.length / (wallMs / 1000),
  };
  // Kept for pooling rounds, left out of the printed JSON.
  Object.defineProperties(out, {
    latencies: { value: latencies, enumerable: false },
    wallMs: { value: wallMs, enumerable: false },
  });
  return out;
}

/**
 * Measures two paths in alternating rounds (A B B A A B B A ...), each round `requests / rounds` pages,
 * and pools each path's latencies: a machine that gets slower or faster during the run affects both
 * paths alike instead of whichever was measured second.
 */
async function measureAlternating(a, b, rounds) {
  const runs = { [a.label]: [], [b.label]: [] };
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? [a, b] : [b, a];
    for (const o of order)
      runs[o.label].push(await measureReads({ ...o, requests: Math.ceil(o.requests / rounds) }));
  }
  const pool = (label) =>
    summarise(
      label,
      runs[label].flatMap((x) => x.latencies),
      runs[label].reduce((n, x) => n + x.errors, 0),
      runs[label].reduce((n, x) => n + x.wallMs, 0),
    );
  return [pool(a.label), pool(b.label)];
}

const signed = (i) => ({
  [shared.IDENTITY_HEADER]: shared.signIdentity(SECRET, { subject: SUBJECT, requestId: `bench-${i}` }),
});

/**
 * A database of its own on the Postgres server of `adminUrl` (created here, dropped afterwards), so
 * that the bench never touches a deployment's data.
 */
async function createBenchDatabase(adminUrl) {
  const { createDatabase, dropDatabase } = require(path.join(root, 'scripts/distributed/launcher.js'));
  const server = new URL(adminUrl);
  server.pathname = '';
  const serverUrl = server.toString().replace(/\/$/, '');
  const name = `results_bench_${process.pid}`;
  await createDatabase(serverUrl, name);
  return { url: `${serverUrl}/${name}`, drop: () => dropDatabase(serverUrl, name) };
}

const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : String(x));

async function main() {
  if (args['gateway-url']) {
    for (const need of ['results-url', 'api-key', 'task-ids'])
      if (!args[need]) throw new Error(`--gateway-url needs --${need}`);
    const taskIds = args['task-ids'].split(',');
    const common = { taskIds, readers: READERS, requests: REQUESTS };
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
    return;
  }

  if (args.distributed === 'true') return benchGatewayDistributed();
  if (args.only === 'gateway') return benchGatewayOverhead();
  const logger = shared.createLogger('results-bench', { level: 'silent' });
  const bus = new shared.InProcessBus({ logger });
  const database = args['database-url'] ? await createBenchDatabase(args['database-url']) : undefined;
  const svc = await results.start({
    env: {
      INTERNAL_SECRET: SECRET,
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
    await svc.janitor.runOnce(); // as in steady state: refreshes planner statistics
    const reads = await measureReads({
      label: 'direct',
      baseUrl: svc.url,
      headers: signed,
      taskIds: ingest.taskIds,
      readers: READERS,
      requests: REQUESTS,
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
  if (args['no-gateway'] !== 'true') await benchGatewayOverhead();
}

/**
 * Feeds the frames of a few tasks owned by SUBJECT through `bus` (task events, frames, end markers),
 * waits until the results service at `resultsUrl` serves them, then issues the same page reads
 * directly to it (signed identity) and through the gateway at `gatewayUrl` (API key), each with
 * READERS concurrent readers, and prints the ratio gateway/direct of p50 and p99 (target <= 1.3).
 */
async function compareThroughGateway({ where, bus, secret, resultsUrl, gatewayUrl, key }) {
  const taskIds = Array.from({ length: 4 }, (_, i) => `bench-gw-task-${process.pid}-${i}`);
  const perTask = 1000;
  await bus.publish(shared.TOPICS.taskEvents, taskIds.map(taskCreated));
  for (let seq = 0; seq < perTask; seq += 250) {
    const batch = [];
    for (let k = seq; k < Math.min(perTask, seq + 250); k++)
      for (const t of taskIds) batch.push({ key: t, value: frameValue(t, k) });
    await bus.publish(shared.TOPICS.frames, batch);
  }
  await bus.publish(
    shared.TOPICS.frames,
    taskIds.map((t) => endOf(t, perTask)),
  );
  const direct = (i) => ({
    [shared.IDENTITY_HEADER]: shared.signIdentity(secret, { subject: SUBJECT, requestId: `bench-${i}` }),
  });
  // Wait until the last frame of every task is readable.
  for (const t of taskIds) {
    for (;;) {
      const r = await fetch(`${resultsUrl}/v1/vision/tasks/${t}/results?limit=500&cursor=`, {
        headers: direct(0),
      }).catch(() => undefined);
      const n = r && r.ok ? (await r.json()).items.length : 0;
      if (n >= 500) break;
      await sleep(50);
    }
  }
  const common = { taskIds, readers: READERS, requests: REQUESTS };
  const [d, g] = await measureAlternating(
    { label: 'direct', baseUrl: resultsUrl, headers: direct, ...common },
    { label: 'gateway', baseUrl: gatewayUrl, headers: () => ({ authorization: `Bearer ${key}` }), ...common },
    ROUNDS,
  );
  const p50 = g.p50_ms / d.p50_ms;
  const p99 = g.p99_ms / d.p99_ms;
  console.log(
    JSON.stringify({
      bench: 'results.gateway',
      where,
      direct: d,
      gateway: g,
      ratio_p50: p50,
      ratio_p99: p99,
    }),
  );
  console.log(
    `gateway overhead (${where}, ${READERS} readers, ${PAGE}-frame pages): direct p50 ${fmt(d.p50_ms)} / p99 ${fmt(d.p99_ms)} ms, gateway p50 ${fmt(g.p50_ms)} / p99 ${fmt(g.p99_ms)} ms; ratio p50 ${fmt(p50, 2)}, p99 ${fmt(p99, 2)} (target <= 1.3) ${p50 <= 1.3 && p99 <= 1.3 ? 'PASS' : 'FAIL'}`,
  );
  // Under saturation the percentiles mostly show the queueing order; mean latency and throughput
  // show the cost the gateway adds.
  console.log(
    `  mean latency direct ${fmt(d.mean_ms)} ms vs gateway ${fmt(g.mean_ms)} ms (ratio ${fmt(g.mean_ms / d.mean_ms, 2)}); throughput ${fmt(d.pages_per_s, 0)} vs ${fmt(g.pages_per_s, 0)} pages/s`,
  );
  if (d.errors + g.errors > 0) process.exitCode = 1;
}

const GATEWAY_LIMITS = {
  GATEWAY_QPS: '100000',
  GATEWAY_BURST: '100000',
  GATEWAY_CONCURRENCY: String(READERS * 2),
};

/**
 * 3. Gateway overhead, standalone: a whole standalone stack in this process (every service, the
 * gateway and this client share one event loop).
 */
async function benchGatewayOverhead() {
  const os = require('node:os');
  const fs = require('node:fs');
  const { startStandalone } = require(path.join(root, 'packages/standalone/dist/index.js'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'results-bench-gw-'));
  const key = 'bench-results-key-0123456789';
  const stack = await startStandalone({
    ports: 'ephemeral',
    logger: shared.createLogger('results-bench', { level: 'silent' }),
    env: {
      PATH: process.env.PATH,
      LOG_LEVEL: 'silent',
      VISION_DATA_DIR: dir,
      VISION_API_KEYS: `${key}:${SUBJECT}`,
      RESULTS_JANITOR_INTERVAL_MS: '0',
      ...GATEWAY_LIMITS,
    },
  });
  try {
    await compareThroughGateway({
      where: 'standalone stack',
      bus: stack.bus,
      secret: stack.env.INTERNAL_SECRET,
      resultsUrl: stack.services.results.url,
      gatewayUrl: stack.url,
      key,
    });
  } finally {
    await stack.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * 3'. Gateway overhead, distributed (--distributed): one deployment started by scripts/distributed on
 * the servers of scripts/stack (each service its own process, Postgres, Kafka, Redis); frames go
 * through Kafka.
 */
async function benchGatewayDistributed() {
  const { Deployment } = require(path.join(root, 'scripts/distributed/launcher.js'));
  const key = 'bench-results-key-0123456789';
  const deployment = new Deployment({ keys: `${key}:${SUBJECT}`, logLevel: 'warn', env: GATEWAY_LIMITS });
  await deployment.start();
  const bus = new shared.KafkaBus({ brokers: [deployment.stack.kafkaBrokers], clientId: 'results-bench' });
  try {
    await compareThroughGateway({
      where: 'distributed deployment',
      bus,
      secret: deployment.secret,
      resultsUrl: deployment.procs.results[0].url,
      gatewayUrl: deployment.url,
      key,
    });
  } finally {
    await bus.close();
    await deployment.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
