'use strict';
/**
 * Starts the six services as separate `node services/<name>/dist/main.js` processes against the servers of
 * scripts/stack (Postgres, Kafka, Redis, MinIO; toxiproxy optional), each deployment with fresh state:
 *
 * - its own Postgres database `vision_<id>` (every service its own schema inside; `scripts/migrate.js` runs first),
 * - its own MinIO bucket `vision-<id>`,
 * - the Kafka topics deleted and created again (6 partitions), so no frame of an earlier run is delivered,
 * - the Redis database flushed (limits start empty).
 *
 * With `toxiproxy: true` every link to Postgres, Redis, Kafka, MinIO and the inference service goes through a
 * toxiproxy proxy (`<id>-<link>`), so tests can add latency, resets and timeouts, or cut a link.
 * Used by test/helpers/distributed.ts and by the CLI scripts/distributed/launch.js. Needs `npm run build`.
 */
const { spawn, execFile } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { Client: PgClient } = require('pg');
const Minio = require('minio');
const Redis = require('ioredis');
const { Kafka, logLevel } = require('kafkajs');

const REPO = path.resolve(__dirname, '../..');
const STACK_SCRIPTS = path.join(REPO, 'scripts/stack');
const STACK_DIR = process.env.VISION_STACK_DIR || path.join(os.homedir(), '.cache/vision-stack');
const SERVICES = ['inference', 'quota', 'tasks', 'results', 'images', 'gateway'];
const TOPICS = ['vision.frames', 'vision.task-events', 'vision.quota-events'];
const TOPIC_PARTITIONS = 6;
const PORT_VAR = {
  gateway: 'PORT',
  tasks: 'TASKS_PORT',
  quota: 'QUOTA_PORT',
  results: 'RESULTS_PORT',
  images: 'IMAGES_PORT',
  inference: 'INFERENCE_PORT',
};
const URL_VAR = {
  tasks: 'TASKS_URL',
  quota: 'QUOTA_URL',
  results: 'RESULTS_URL',
  images: 'IMAGES_URL',
  inference: 'INFERENCE_URL',
};

/** Each deployment's process logs go to <LOG_ROOT>/<id>/<service>.log; those older than a day are pruned. */
const LOG_ROOT = path.join(os.tmpdir(), 'vision-dist');

function pruneOldLogs() {
  const cutoff = Date.now() - 24 * 3600_000;
  for (const name of fs.existsSync(LOG_ROOT) ? fs.readdirSync(LOG_ROOT) : []) {
    const dir = path.join(LOG_ROOT, name);
    try {
      if (fs.statSync(dir).mtimeMs < cutoff) fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // another run removed it
    }
  }
}

/** Connection settings written by scripts/stack/start.sh. */
function readStackEnv() {
  const file = path.join(STACK_DIR, 'stack.env');
  if (!fs.existsSync(file))
    throw new Error(`${file} missing: run scripts/stack/install.sh && scripts/stack/start.sh`);
  const out = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1]] = m[2];
  }
  return {
    pgUrl: out.VISION_STACK_PG_URL,
    redisUrl: out.VISION_STACK_REDIS_URL,
    kafkaBrokers: out.VISION_STACK_KAFKA_BROKERS,
    kafkaProxiedUpstream: out.VISION_STACK_KAFKA_PROXIED_UPSTREAM,
    kafkaProxiedListen: out.VISION_STACK_KAFKA_PROXIED_LISTEN,
    s3Endpoint: out.VISION_STACK_S3_ENDPOINT,
    s3AccessKey: out.VISION_STACK_S3_ACCESS_KEY,
    s3SecretKey: out.VISION_STACK_S3_SECRET_KEY,
    toxiproxyUrl: out.VISION_STACK_TOXIPROXY_URL,
    otlpEndpoint: out.VISION_STACK_OTLP_ENDPOINT,
    jaegerUrl: out.VISION_STACK_JAEGER_URL,
    prometheusUrl: out.VISION_STACK_PROMETHEUS_URL,
    prometheusTargets: out.VISION_STACK_PROMETHEUS_TARGETS,
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function hostPort(url) {
  const u = new URL(url);
  return `${u.hostname}:${u.port}`;
}

/** Runs a scripts/stack/*.sh script; resolves with its output, rejects with it on failure. */
function stackScript(script, args = []) {
  return new Promise((resolve, reject) => {
    execFile(path.join(STACK_SCRIPTS, script), args, { timeout: 180_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${script} ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve(`${stdout}${stderr}`);
    });
  });
}

/** Minimal client of toxiproxy's HTTP API. */
class Toxiproxy {
  constructor(url) {
    this.url = url;
  }
  async call(method, p, body) {
    const res = await fetch(`${this.url}${p}`, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (!res.ok && !(method === 'DELETE' && res.status === 404))
      throw new Error(`toxiproxy ${method} ${p}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  }
  /** Creates (or replaces) a proxy; `listen` may use port 0. Resolves with the address it listens on. */
  async create(name, listen, upstream) {
    await this.call('DELETE', `/proxies/${name}`);
    const p = await this.call('POST', '/proxies', { name, listen, upstream, enabled: true });
    return p.listen;
  }
  remove(name) {
    return this.call('DELETE', `/proxies/${name}`);
  }
  setEnabled(name, enabled) {
    return this.call('POST', `/proxies/${name}`, { enabled });
  }
  addToxic(name, toxic) {
    return this.call('POST', `/proxies/${name}/toxics`, toxic);
  }
  removeToxic(name, toxicName) {
    return this.call('DELETE', `/proxies/${name}/toxics/${toxicName}`);
  }
  async removeAllToxics(name) {
    const toxics = (await this.call('GET', `/proxies/${name}/toxics`)) ?? [];
    for (const t of toxics) await this.removeToxic(name, t.name);
  }
}

/** Deletes the topics (when present) and creates them again, empty. Retries while a deletion is in progress. */
async function resetTopics(brokers) {
  const kafka = new Kafka({ clientId: 'vision-launcher', brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const present = TOPICS.filter((t) => existing.has(t));
    if (present.length) await admin.deleteTopics({ topics: present, timeout: 30_000 });
    for (let i = 0; ; i++) {
      const left = (await admin.listTopics()).filter((t) => TOPICS.includes(t));
      if (left.length === 0) break;
      if (i > 100) throw new Error(`topics still present after deletion: ${left.join(', ')}`);
      await sleep(200);
    }
  } finally {
    await admin.disconnect();
  }
  // Creation goes through the project's own helper (the one a deployment uses).
  const { ensureTopics } = require(path.join(REPO, 'packages/shared/dist/adapters/kafka-bus.js'));
  for (let i = 0; ; i++) {
    try {
      await ensureTopics(brokers, TOPICS, TOPIC_PARTITIONS, { clientId: 'vision-launcher' });
      return;
    } catch (err) {
      if (i > 50) throw err;
      await sleep(300); // "topic is marked for deletion" until the controller has finished
    }
  }
}

async function createDatabase(pgUrl, name) {
  const client = new PgClient({ connectionString: `${pgUrl}/postgres` });
  await client.connect();
  try {
    await client.query(`create database "${name}"`);
  } finally {
    await client.end();
  }
}

async function dropDatabase(pgUrl, name) {
  const client = new PgClient({ connectionString: `${pgUrl}/postgres` });
  await client.connect();
  try {
    await client.query(`drop database if exists "${name}" with (force)`);
  } finally {
    await client.end();
  }
}

function minioClient(stack) {
  const u = new URL(stack.s3Endpoint);
  return new Minio.Client({
    endPoint: u.hostname,
    port: Number(u.port),
    useSSL: false,
    accessKey: stack.s3AccessKey,
    secretKey: stack.s3SecretKey,
    region: 'us-east-1',
    pathStyle: true,
  });
}

async function removeBucket(client, bucket) {
  if (!(await client.bucketExists(bucket))) return;
  const keys = [];
  const stream = client.listObjectsV2(bucket, '', true);
  for await (const item of stream) if (item.name) keys.push(item.name);
  for (let i = 0; i < keys.length; i += 1000) await client.removeObjects(bucket, keys.slice(i, i + 1000));
  await client.removeBucket(bucket);
}

async function flushRedis(url) {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await r.connect();
  try {
    await r.flushdb();
  } finally {
    r.disconnect();
  }
}

/**
 * One deployment: the six services (some with replicas) as child processes.
 *
 * options:
 *   id          deployment id (default random); names the database, bucket and proxies
 *   keys        VISION_API_KEYS for the gateway(s)
 *   env         extra environment for every service (overrides the defaults below)
 *   serviceEnv  { <service>: { VAR: value } } extra environment for one service
 *   replicas    { gateway?: n, results?: n } (default 1 each)
 *   toxiproxy   route Postgres, Redis, Kafka, MinIO and inference links through toxiproxy (default false)
 *   logDir      where each process's output goes (default a temp dir); logLevel (default 'warn')
 *
 * Observability: each process serves GET /metrics on a port of its own (METRICS_PORT); the deployment lists
 * them for the stack's Prometheus (<targets dir>/<id>.json, labels service, deployment, replica) while it runs,
 * and the services export their spans to the stack's Jaeger (OTLP/HTTP) when scripts/stack started them.
 */
class Deployment {
  constructor(options = {}) {
    this.options = options;
    this.id = options.id || `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
    this.database = `vision_${this.id}`.toLowerCase();
    this.bucket = `vision-${this.id}`.toLowerCase();
    this.stack = readStackEnv();
    this.toxiproxy = new Toxiproxy(this.stack.toxiproxyUrl);
    this.useToxiproxy = options.toxiproxy === true;
    this.logDir = options.logDir || path.join(LOG_ROOT, this.id);
    fs.mkdirSync(this.logDir, { recursive: true });
    this.dataDir = path.join(this.logDir, 'data');
    fs.mkdirSync(this.dataDir, { recursive: true });
    this.secret = randomBytes(24).toString('base64url');
    /** name -> [{ port, url, child, exited }] */
    this.procs = {};
    /** link name -> toxiproxy proxy name */
    this.proxies = {};
    this.closed = false;
  }

  replicas(name) {
    return Math.max(1, (this.options.replicas && this.options.replicas[name]) || 1);
  }

  /** The environment shared by every service (the peers' URLs are added as they start). */
  baseEnv(links) {
    return {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      VISION_MODE: 'distributed',
      LOG_LEVEL: this.options.logLevel || process.env.E2E_LOG_LEVEL || 'warn',
      VISION_DATA_DIR: this.dataDir,
      INTERNAL_SECRET: this.secret,
      DATABASE_URL: `${links.pg}/${this.database}`,
      KAFKA_BROKERS: links.kafka,
      REDIS_URL: links.redis,
      S3_ENDPOINT: links.s3,
      S3_ACCESS_KEY: this.stack.s3AccessKey,
      S3_SECRET_KEY: this.stack.s3SecretKey,
      S3_BUCKET: this.bucket,
      S3_REGION: 'us-east-1',
      VISION_MODELS_DIR: process.env.VISION_MODELS_DIR || path.resolve(REPO, '../shared/models'),
      STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
      TASKS_ADMIN_TOKEN: `admin-${this.secret}`,
      HOST: '127.0.0.1',
      KAFKAJS_NO_PARTITIONER_WARNING: '1',
      // Spans go to the stack's Jaeger (or OTEL_EXPORTER_OTLP_ENDPOINT); without either nothing is exported.
      ...(process.env.OTEL_EXPORTER_OTLP_ENDPOINT || this.stack.otlpEndpoint
        ? {
            OTEL_EXPORTER_OTLP_ENDPOINT: process.env.OTEL_EXPORTER_OTLP_ENDPOINT || this.stack.otlpEndpoint,
            OTEL_BSP_SCHEDULE_DELAY: '300',
          }
        : { OTEL_TRACES_EXPORTER: 'none' }),
      METRICS_HOST: '127.0.0.1',
      ...(this.options.keys ? { VISION_API_KEYS: this.options.keys } : {}),
      ...this.options.env,
    };
  }

  async proxy(link, upstream, listen = '127.0.0.1:0') {
    const name = `${this.id}-${link}`;
    const addr = await this.toxiproxy.create(name, listen, upstream);
    this.proxies[link] = name;
    return addr;
  }

  async start() {
    pruneOldLogs();
    for (const f of ['gateway', 'tasks', 'quota', 'results', 'images', 'inference']) {
      if (!fs.existsSync(path.join(REPO, `services/${f}/dist/main.js`)))
        throw new Error(`services/${f}/dist/main.js missing: run npm run build`);
    }
    const s = this.stack;
    await createDatabase(s.pgUrl, this.database);
    try {
      const mc = minioClient(s);
      await mc.makeBucket(this.bucket, 'us-east-1');
      await resetTopics([s.kafkaBrokers]);
      await flushRedis(s.redisUrl);
      const links = { pg: s.pgUrl, kafka: s.kafkaBrokers, redis: s.redisUrl, s3: s.s3Endpoint };
      if (this.useToxiproxy) {
        const pg = new URL(s.pgUrl);
        const pgAddr = await this.proxy('postgres', `${pg.hostname}:${pg.port}`);
        pg.host = pgAddr;
        links.pg = pg.toString().replace(/\/$/, '');
        links.redis = `redis://${await this.proxy('redis', hostPort(s.redisUrl))}`;
        // The broker advertises the PROXIED listener at this fixed address (scripts/stack/start.sh).
        links.kafka = await this.proxy('kafka', s.kafkaProxiedUpstream, s.kafkaProxiedListen);
        links.s3 = `http://${await this.proxy('minio', hostPort(s.s3Endpoint))}`;
      }
      this.links = links;
      this.env = this.baseEnv(links);
      await this.run(process.execPath, [path.join(REPO, 'scripts/migrate.js')], this.env, 'migrate');
      for (const name of SERVICES) {
        const n = this.replicas(name);
        this.procs[name] = [];
        for (let i = 0; i < n; i++) {
          const port = await freePort();
          const metricsPort = await freePort();
          this.procs[name].push({
            name,
            index: i,
            port,
            url: `http://127.0.0.1:${port}`,
            metricsPort,
            metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
            child: undefined,
          });
        }
        if (URL_VAR[name]) {
          let url = this.procs[name][0].url;
          if (name === 'inference' && this.useToxiproxy)
            url = `http://${await this.proxy('inference', `127.0.0.1:${this.procs[name][0].port}`)}`;
          this.env[URL_VAR[name]] = url;
        }
        await Promise.all(this.procs[name].map((p) => this.spawnService(p)));
      }
      this.writeScrapeTargets();
    } catch (err) {
      await this.close().catch(() => undefined);
      throw err;
    }
    return this;
  }

  get url() {
    return this.procs.gateway[0].url;
  }

  /** The file listing this deployment's metrics endpoints for the stack's Prometheus (none without one). */
  get targetsFile() {
    const dir = this.stack.prometheusTargets;
    return dir ? path.join(dir, `${this.id}.json`) : undefined;
  }

  writeScrapeTargets() {
    const file = this.targetsFile;
    if (!file || !fs.existsSync(path.dirname(file))) return;
    const groups = Object.values(this.procs)
      .flat()
      .map((p) => ({
        targets: [`127.0.0.1:${p.metricsPort}`],
        labels: { service: p.name, deployment: this.id, replica: String(p.index) },
      }));
    // Written whole then renamed: Prometheus never reads half a file.
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(groups, null, 2));
    fs.renameSync(`${file}.tmp`, file);
  }

  urls(name) {
    return this.procs[name].map((p) => p.url);
  }

  run(cmd, args, env, label) {
    return new Promise((resolve, reject) => {
      const out = fs.openSync(path.join(this.logDir, `${label}.log`), 'a');
      const child = spawn(cmd, args, { cwd: REPO, env, stdio: ['ignore', out, out] });
      child.on('error', reject);
      child.on('exit', (code) => {
        fs.closeSync(out);
        if (code === 0) resolve();
        else reject(new Error(`${label} exited ${code}: ${this.tail(label)}`));
      });
    });
  }

  tail(label, lines = 30) {
    try {
      return fs
        .readFileSync(path.join(this.logDir, `${label}.log`), 'utf8')
        .split('\n')
        .slice(-lines)
        .join('\n');
    } catch {
      return '';
    }
  }

  label(p) {
    return p.index === 0 ? p.name : `${p.name}-${p.index + 1}`;
  }

  /** Starts one service process and waits until its /readyz answers 200. */
  async spawnService(p, { waitReady = true } = {}) {
    const label = this.label(p);
    const env = {
      ...this.env,
      [PORT_VAR[p.name]]: String(p.port),
      METRICS_PORT: String(p.metricsPort),
      ...(this.options.serviceEnv && this.options.serviceEnv[p.name]),
    };
    const out = fs.openSync(path.join(this.logDir, `${label}.log`), 'a');
    const child = spawn(
      process.execPath,
      ['--require', path.join(__dirname, 'loopback.js'), path.join(REPO, `services/${p.name}/dist/main.js`)],
      { cwd: REPO, env, stdio: ['ignore', out, out] },
    );
    fs.closeSync(out);
    p.child = child;
    p.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    if (waitReady) await this.waitReady(p);
    return p;
  }

  async waitReady(p, timeoutMs = 90_000) {
    const end = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      if (p.child.exitCode !== null || p.child.signalCode !== null)
        throw new Error(`${this.label(p)} exited during start:\n${this.tail(this.label(p))}`);
      try {
        const res = await fetch(`${p.url}/readyz`, { signal: AbortSignal.timeout(5000) });
        last = `${res.status} ${await res.text()}`;
        if (res.ok) return;
      } catch (err) {
        last = String(err);
      }
      if (Date.now() > end) throw new Error(`${this.label(p)} not ready after ${timeoutMs} ms: ${last}`);
      await sleep(200);
    }
  }

  proc(name, index = 0) {
    const p = this.procs[name] && this.procs[name][index];
    if (!p) throw new Error(`no ${name} replica ${index}`);
    return p;
  }

  /** Sends a signal to one service process (default SIGKILL) and waits for it to exit. */
  async kill(name, { signal = 'SIGKILL', index = 0, timeoutMs = 30_000 } = {}) {
    const p = this.proc(name, index);
    if (!p.child || p.child.exitCode !== null || p.child.signalCode !== null) return;
    p.child.kill(signal);
    const t = setTimeout(() => p.child.kill('SIGKILL'), timeoutMs);
    await p.exited;
    clearTimeout(t);
  }

  /** Starts a stopped or killed service process again on the same port, and waits until it is ready. */
  async restart(name, { index = 0, waitReady = true } = {}) {
    const p = this.proc(name, index);
    await this.kill(name, { index, signal: 'SIGTERM' });
    await this.spawnService(p, { waitReady });
  }

  /** Stops every service (SIGTERM, then SIGKILL after 20 s), removes the proxies, drops the database and bucket. */
  async close({ keepData = false } = {}) {
    if (this.closed) return;
    this.closed = true;
    // The gateway(s) first (no new requests), then the rest together.
    const stop = (names) =>
      Promise.all(
        names.flatMap((name) =>
          (this.procs[name] || []).map((p) =>
            this.kill(name, { index: p.index, signal: 'SIGTERM', timeoutMs: 15_000 }),
          ),
        ),
      );
    await stop(['gateway']);
    await stop(SERVICES.filter((n) => n !== 'gateway'));
    for (const proxy of Object.values(this.proxies))
      await this.toxiproxy.remove(proxy).catch(() => undefined);
    if (this.targetsFile) fs.rmSync(this.targetsFile, { force: true });
    if (!keepData) {
      await dropDatabase(this.stack.pgUrl, this.database).catch(() => undefined);
      await removeBucket(minioClient(this.stack), this.bucket).catch(() => undefined);
    }
  }
}

module.exports = {
  Deployment,
  Toxiproxy,
  readStackEnv,
  stackScript,
  createDatabase,
  dropDatabase,
  SERVICES,
  TOPICS,
  STACK_DIR,
  LOG_ROOT,
};
