'use strict';
/* global performance, setTimeout */
/**
 * The scheduling bench's fleet: job-running replicas simulated in one process, each a real ReplicaOwner
 * (services/inference/dist/ownership) with a KnexLeaseStore of its own over one shared knex pool, and
 * bench/lib/sim-jobs.js for the jobs it runs. Also the bench's own database on a Postgres server (migrated as the
 * service migrates it, dropped afterwards), the count of the statements sent to it by kind, and where each job runs.
 */
const path = require('node:path');
const os = require('node:os');
const { SimJobs, statementKind } = require('./sim-jobs');

const root = path.resolve(__dirname, '../..');
const shared = require(path.join(root, 'packages/shared/dist/index.js'));
const ownership = path.join(root, 'services/inference/dist/ownership');
const { ReplicaOwner } = require(path.join(ownership, 'replica-owner.js'));
const { KnexLeaseStore } = require(path.join(ownership, 'store/lease-store.js'));
const { migrations, OWNERSHIP_SCHEMA } = require(path.join(ownership, 'store/migrations.js'));
const knexFactory = require(require.resolve('knex', { paths: [path.join(root, 'packages/shared')] }));
const { readStackEnv } = require(path.join(root, 'scripts/distributed/stack-servers.js'));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.now();

/** The owner loop logs through this: warnings counted by message (fences, failed beats), the rest dropped. */
function countingLogger() {
  const warnings = new Map();
  const add = (msg) => warnings.set(msg, (warnings.get(msg) ?? 0) + 1);
  const logger = {
    level: 'warn',
    warnings,
    info() {},
    debug() {},
    trace() {},
    warn: (_o, msg) => add(msg),
    error: (_o, msg) => add(`error: ${msg}`),
    child: () => logger,
  };
  return logger;
}

/**
 * A database of the bench's own on the server of `databaseUrl` (or the stack's Postgres), migrated as the
 * service migrates it; `knex` over it with `pool` connections; `drop()` closes it and drops the database.
 */
async function benchDatabase({ databaseUrl, pool, logger }) {
  const url = databaseUrl ?? readStackEnv().pgUrl;
  if (!url)
    throw new Error('no Postgres: pass --database-url, or start the stack (scripts/stack/start.sh postgres)');
  const server = new URL(url);
  server.pathname = '/postgres';
  const name = `scheduling_bench_${process.pid}`;
  const admin = knexFactory({ client: 'pg', connection: server.toString(), pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${name}`);
  const dbUrl = new URL(server);
  dbUrl.pathname = `/${name}`;
  const migrated = await shared.openDb(
    { VISION_MODE: 'distributed', DATABASE_URL: dbUrl.toString(), VISION_DATA_DIR: os.tmpdir() },
    { schema: OWNERSHIP_SCHEMA, migrations, logger },
  );
  await migrated.close();
  const knex = knexFactory({
    client: 'pg',
    connection: dbUrl.toString(),
    searchPath: [OWNERSHIP_SCHEMA],
    pool: { min: 0, max: pool },
    acquireConnectionTimeout: 10_000,
  });
  return {
    knex,
    async drop() {
      await knex.destroy();
      await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.destroy();
    },
  };
}

class Fleet {
  /**
   * @param {object} o knex (the shared pool), logger, and the ReplicaOwner settings: capacity, beatMs, takeMs,
   *   leaseTtlMs, givenMs
   */
  constructor(o) {
    this.o = o;
    this.store = new KnexLeaseStore(o.knex);
    /** id -> { id, owner, jobs: SimJobs, halted } */
    this.replicas = new Map();
    /** Every start of a job in any replica, and when the last one was. */
    this.starts = 0;
    this.lastStartAt = 0;
    this.statements = { total: 0, byKind: new Map() };
    o.knex.on('query', (q) => {
      this.statements.total++;
      const k = statementKind(q.sql ?? '');
      this.statements.byKind.set(k, (this.statements.byKind.get(k) ?? 0) + 1);
    });
    this.doubles = { instants: 0, jobs: new Set(), stale: new Set() };
  }

  add(i) {
    const id = `replica-${String(i).padStart(3, '0')}`;
    const jobs = new SimJobs({
      onStart: () => {
        this.starts++;
        this.lastStartAt = now();
      },
    });
    const { capacity, beatMs, takeMs, leaseTtlMs, givenMs, logger } = this.o;
    const owner = new ReplicaOwner({
      ...{ store: this.store, jobs, logger, replicaId: id, capacity },
      ...{ leaseTtlMs, beatMs, takeMs, givenMs, rebalance: true, overlapMs: 10_000 },
    });
    const r = { id, owner, jobs, halted: false };
    this.replicas.set(id, r);
    return r;
  }

  /** Starts replicas `from`..`to - 1` spread over one beat (a deployment's replicas start at their own times). */
  async start(from, to) {
    const n = to - from;
    await Promise.all(
      Array.from({ length: n }, async (_, k) => {
        await sleep((k * this.o.beatMs) / n);
        const r = this.add(from + k);
        await r.owner.start(`http://127.0.0.1:${20000 + from + k}`);
      }),
    );
  }

  /** A crash: no beat, no hand-over; its jobs keep running in it (its frames would be fenced in results). */
  halt(r) {
    r.owner.halt();
    r.halted = true;
  }

  live() {
    return [...this.replicas.values()].filter((r) => !r.halted);
  }

  /** As OwnedJobs.submit places a job on replica `r` (without the request's validation: it needs a JobManager). */
  async submit(r, request) {
    const target = r.owner.place();
    if (!target) return 'over_capacity';
    const here = target === r.id;
    const record = await this.store.insert(request, target, here);
    if (!record) return 'duplicate';
    if (here) await r.owner.runHere(record);
    return 'accepted';
  }

  /** How many replicas each job runs in now: live replicas and halted ones apart. */
  where() {
    const inLive = new Map();
    const inHalted = new Map();
    for (const r of this.replicas.values())
      for (const id of r.jobs.jobs.keys()) {
        const m = r.halted ? inHalted : inLive;
        m.set(id, (m.get(id) ?? 0) + 1);
      }
    return { inLive, inHalted };
  }

  /** Every job of `ids` runs in exactly one live replica. */
  runningOnce(ids) {
    const { inLive } = this.where();
    return ids.every((id) => inLive.get(id) === 1);
  }

  /** Jobs per live replica: the fewest, the most. */
  spread() {
    const n = this.live().map((r) => r.jobs.jobs.size);
    return { min: Math.min(...n), max: Math.max(...n), spread: Math.max(...n) - Math.min(...n) };
  }

  /** One sampling instant: jobs in two live replicas (double owners), and in a halted and a live one (stale). */
  sample() {
    const { inLive, inHalted } = this.where();
    let doubles = 0;
    for (const [id, n] of inLive) {
      if (n > 1) {
        doubles++;
        this.doubles.jobs.add(id);
      }
      if (inHalted.has(id)) this.doubles.stale.add(id);
    }
    if (doubles > 0) this.doubles.instants++;
  }

  statementsNow() {
    return { total: this.statements.total, byKind: new Map(this.statements.byKind), at: now() };
  }

  fenced() {
    return [...this.replicas.values()].reduce((n, r) => n + (r.halted ? 0 : r.jobs.fenced), 0);
  }

  haltAll() {
    for (const r of this.replicas.values()) r.owner.halt();
  }
}

module.exports = { Fleet, benchDatabase, countingLogger };
