'use strict';
/**
 * The servers of scripts/stack as the launcher (launcher.js) uses them: their connection settings (written by
 * scripts/stack/start.sh), the stack scripts, toxiproxy's HTTP API, and the per-deployment state on each server
 * (Postgres database, S3 bucket, Kafka topics, Redis flush). Plain CommonJS, no build step.
 */
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Minio = require('minio');
const Redis = require('ioredis');

const REPO = path.resolve(__dirname, '../..');
const STACK_SCRIPTS = path.join(REPO, 'scripts/stack');
const STACK_DIR = process.env.VISION_STACK_DIR || path.join(os.homedir(), '.cache/vision-stack');
/** The state directory of the set of servers in use (VISION_STACK_SET; scripts/stack/common.sh): its stack.env. */
const STATE_DIR = process.env.VISION_STACK_SET
  ? path.join(STACK_DIR, 'sets', process.env.VISION_STACK_SET)
  : STACK_DIR;
// In start order: each is given the URLs of those before it (tasks asks images for image calls on the way).
const SERVICES = ['inference', 'quota', 'images', 'tasks', 'results', 'gateway'];
const TOPICS = ['vision.frames', 'vision.task-events', 'vision.quota-events', 'vision.image-calls'];
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
  const file = path.join(STATE_DIR, 'stack.env');
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
    // The broker's super user (SASL/SCRAM-SHA-512): provisioning and tests that inspect the broker, never a service.
    kafkaSasl: out.VISION_STACK_KAFKA_ADMIN_USER && {
      mechanism: 'scram-sha-512',
      ...{ username: out.VISION_STACK_KAFKA_ADMIN_USER, password: out.VISION_STACK_KAFKA_ADMIN_PASSWORD },
    },
    kafkaProxiedUpstream: out.VISION_STACK_KAFKA_PROXIED_UPSTREAM,
    kafkaProxiedListen: out.VISION_STACK_KAFKA_PROXIED_LISTEN,
    s3Endpoint: out.VISION_STACK_S3_ENDPOINT,
    s3AccessKey: out.VISION_STACK_S3_ACCESS_KEY,
    s3SecretKey: out.VISION_STACK_S3_SECRET_KEY,
    toxiproxyUrl: out.VISION_STACK_TOXIPROXY_URL,
    // Present while scripts/stack runs Jaeger and Prometheus.
    otlpEndpoint: out.VISION_STACK_OTLP_ENDPOINT,
    jaegerUrl: out.VISION_STACK_JAEGER_URL,
    prometheusUrl: out.VISION_STACK_PROMETHEUS_URL,
    prometheusTargets: out.VISION_STACK_PROMETHEUS_TARGETS,
    // Present while the servers also listen for a test cluster's pods (VISION_STACK_POD_ADDRESS).
    pod: out.VISION_STACK_POD_PG_URL && {
      pgUrl: out.VISION_STACK_POD_PG_URL,
      redisUrl: out.VISION_STACK_POD_REDIS_URL,
      kafkaBrokers: out.VISION_STACK_POD_KAFKA_BROKERS,
      s3Endpoint: out.VISION_STACK_POD_S3_ENDPOINT,
      // Jaeger's OTLP/HTTP receiver for pods, while it runs.
      otlpEndpoint: out.VISION_STACK_POD_OTLP_ENDPOINT,
    },
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

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

/**
 * Deletes the topics of the deployment whose KAFKA_PREFIX is `prefix` (default none: the plain names) when present,
 * and creates them again, empty, signed in as `sasl` (the stack's super user). The topics of another prefix are left
 * as they are. Retries while a deletion is in progress.
 */
async function resetTopics(brokers, sasl, prefix = '') {
  // Names and creation go through the project's own helpers (those a deployment uses).
  const { busTopics } = require(path.join(REPO, 'packages/shared/dist/bus/port.js'));
  const { ensureTopics, newKafka } = require(path.join(REPO, 'packages/shared/dist/bus/kafka-bus.js'));
  const topics = busTopics(prefix);
  // newKafka, not kafkajs's own: an idle request queue of a plain client wakes every millisecond (tulios/kafkajs#1751).
  const admin = newKafka({ brokers, sasl }, 'vision-launcher').admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const present = topics.filter((t) => existing.has(t));
    if (present.length) await admin.deleteTopics({ topics: present, timeout: 30_000 });
    for (let i = 0; ; i++) {
      const left = (await admin.listTopics()).filter((t) => topics.includes(t));
      if (left.length === 0) break;
      if (i > 100) throw new Error(`topics still present after deletion: ${left.join(', ')}`);
      await sleep(200);
    }
  } finally {
    await admin.disconnect();
  }
  for (let i = 0; ; i++) {
    try {
      await ensureTopics(brokers, topics, TOPIC_PARTITIONS, { clientId: 'vision-launcher', sasl });
      return;
    } catch (err) {
      if (i > 50) throw err;
      await sleep(300); // "topic is marked for deletion" until the controller has finished
    }
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

module.exports = {
  REPO,
  STACK_DIR,
  SERVICES,
  TOPICS,
  PORT_VAR,
  URL_VAR,
  LOG_ROOT,
  pruneOldLogs,
  readStackEnv,
  sleep,
  hostPort,
  stackScript,
  Toxiproxy,
  resetTopics,
  minioClient,
  removeBucket,
  flushRedis,
};
