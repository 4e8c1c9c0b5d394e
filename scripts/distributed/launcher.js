'use strict';
/**
 * Starts the six services as separate `node services/<name>/dist/main.js` processes against the servers of
 * scripts/stack (Postgres, Kafka, Redis, S3; toxiproxy optional), each deployment with fresh state:
 *
 * - its own Postgres database `vision_<id>` (every service its own schema inside, reached with its own login;
 *   `scripts/migrate.js` runs first, with the owner login: db-logins.js),
 * - its own S3 bucket `vision-<id>`,
 * - the Kafka topics deleted and created again (6 partitions), so no frame of an earlier run is delivered, and a
 *   Kafka principal per service (bus-logins.js),
 * - the Redis database flushed (limits start empty).
 * With `toxiproxy: true` every link to Postgres, Redis, Kafka, S3 and the inference service goes through a
 * toxiproxy proxy (`<id>-<link>`), so tests can add latency, resets and timeouts, or cut a link.
 * Used by test/helpers/distributed.ts and by the CLI scripts/distributed/launch.js. Needs `npm run build`.
 */
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const {
  REPO,
  SERVICES,
  PORT_VAR,
  URL_VAR,
  LOG_ROOT,
  pruneOldLogs,
  readStackEnv,
  hostPort,
  Toxiproxy,
  minioClient,
  removeBucket,
  flushRedis,
  stackScript,
  TOPICS,
  STACK_DIR,
} = require('./stack-servers');
const { freePort } = require('./ports');
const {
  DB_SERVICES,
  createDeploymentDatabase,
  dropDeploymentDatabase,
  loginUrl,
  migrateDeployment,
} = require('./db-logins');
const {
  serviceEnv,
  runLogged,
  tailLog,
  spawnProcess,
  writeScrapeTargets,
  waitServiceReady,
} = require('./service-env');
const { resetBus, dropDeploymentBusLogins, busLoginEnv } = require('./bus-logins');
const { startBalancer } = require('./balancer');
const { ContainerRuntime } = require('./container-runtime');
const { writeServiceIdentityDirs } = require('../../packages/shared/dist/identity/identity-keys');

/**
 * One deployment: the six services (some with replicas) as child processes, or as containers of the service image.
 *
 * options:
 *   id, keys    deployment id (default random; names the database, bucket and proxies); the gateways' VISION_API_KEYS
 *   env         extra environment for every service (overrides the defaults below)
 *   serviceEnv  { <service>: { VAR: value } } extra environment for one service
 *   replicas    { gateway?, results?, images?, inference?: n } (default 1 each; images, inference behind balancer.js)
 *   toxiproxy   route Postgres, Redis, Kafka, S3 and inference links through toxiproxy (default false)
 *   logDir      where each process's output goes (default a temp dir); logLevel (default 'warn')
 *   runtime     'process' (default) or 'container' (podman, container-runtime.js); default VISION_DEPLOYMENT_RUNTIME
 *   image       the service image in container mode (default VISION_IMAGE, else localhost/vision:dev)
 *   scraped     false: not listed for the stack's Prometheus, which scrapes every second (default true)
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
    // Each service process gets its own identity directory: its key (if it calls others) and its callers' public keys.
    this.identityDirs = writeServiceIdentityDirs(path.join(this.dataDir, 'identity'));
    this.runtime = options.runtime || process.env.VISION_DEPLOYMENT_RUNTIME || 'process';
    if (!['process', 'container'].includes(this.runtime))
      throw new Error(`runtime must be process or container, not ${this.runtime}`);
    if (this.runtime === 'container') this.containers = new ContainerRuntime(this, options.image);
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
    return serviceEnv(this, links);
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
    try {
      this.dbLogins = await createDeploymentDatabase(s.pgUrl, this.database);
      const mc = minioClient(s);
      await mc.makeBucket(this.bucket, 'us-east-1');
      this.busLogins = await resetBus(s, this.database);
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
        links.s3 = `http://${await this.proxy('s3', hostPort(s.s3Endpoint))}`;
      }
      this.links = links;
      this.env = this.baseEnv(links);
      await migrateDeployment(this);
      for (const name of SERVICES) {
        const n = this.replicas(name);
        this.procs[name] = [];
        for (let i = 0; i < n; i++) {
          const port = await freePort('services');
          const metricsPort = await freePort('services');
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
          if ((name === 'images' || name === 'inference') && n > 1)
            url = ((this.balancers ||= {})[name] = await startBalancer(this.procs[name])).url;
          if (name === 'inference' && this.useToxiproxy)
            url = `http://${await this.proxy('inference', hostPort(url))}`;
          this.env[URL_VAR[name]] = url;
        }
      }
      // Every address is known first, so all start at once: a service waits for a peer through its readiness.
      await Promise.all(SERVICES.flatMap((name) => this.procs[name].map((p) => this.spawnService(p))));
      writeScrapeTargets(this);
    } catch (err) {
      await this.close().catch(() => undefined);
      throw err;
    }
    return this;
  }

  get url() {
    return this.procs.gateway[0].url;
  }

  /** The database URL of a service's own login, or of the owner's ('owner'), through the Postgres link. */
  databaseUrl(who) {
    return loginUrl(this.links.pg, this.database, this.dbLogins[who]);
  }

  urls(name) {
    return this.procs[name].map((p) => p.url);
  }

  /** Runs a command to completion with its output in <logDir>/<label>.log. */
  run(cmd, args, env, label) {
    return runLogged(this.logDir, cmd, args, env, label);
  }

  tail(label, lines = 30) {
    return tailLog(this.logDir, label, lines);
  }

  label(p) {
    return p.index === 0 ? p.name : `${p.name}-${p.index + 1}`;
  }

  /** The file listing this deployment's metrics endpoints for the stack's Prometheus (none without one). */
  get targetsFile() {
    const dir = this.options.scraped === false ? undefined : this.stack.prometheusTargets;
    return dir ? path.join(dir, `${this.id}.json`) : undefined;
  }

  /** Starts one service process (or container) and waits until its /readyz and its metrics answer 200. */
  async spawnService(p, { waitReady = true } = {}) {
    const label = this.label(p);
    const env = {
      ...this.env,
      [PORT_VAR[p.name]]: String(p.port),
      METRICS_PORT: String(p.metricsPort),
      VISION_IDENTITY_DIR: this.identityDirs[p.name],
      ...(DB_SERVICES.includes(p.name) && { DATABASE_URL: this.databaseUrl(p.name) }),
      ...busLoginEnv(this.busLogins, p.name),
      ...(this.options.serviceEnv && this.options.serviceEnv[p.name]),
    };
    if (this.containers) await this.containers.start(p, env);
    else p.child = spawnProcess(this, p, env, label);
    if (waitReady) await this.waitReady(p);
    return p;
  }

  waitReady(p, timeoutMs = 180_000 /* an inference replica's start took 91 s beside the node's checks */) {
    return waitServiceReady(this, p, timeoutMs);
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
    if (this.containers) return this.containers.kill(p, signal, timeoutMs);
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

  /** Container mode: SIGKILL of a replica's host pid (a crash); podman restarts it, then it is awaited ready. */
  async crash(name, { index = 0 } = {}) {
    if (!this.containers) throw new Error('crash() needs the container runtime');
    const p = this.proc(name, index);
    const restarted = await this.containers.crash(p);
    await this.waitReady(p);
    return restarted;
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
    if (this.containers) await this.containers.removeAll();
    for (const b of Object.values(this.balancers || {})) await b.close();
    for (const proxy of Object.values(this.proxies))
      await this.toxiproxy.remove(proxy).catch(() => undefined);
    if (this.targetsFile) fs.rmSync(this.targetsFile, { force: true });
    if (!keepData) {
      await dropDeploymentDatabase(this.stack.pgUrl, this.database).catch(() => undefined);
      await removeBucket(minioClient(this.stack), this.bucket).catch(() => undefined);
      if (this.busLogins) await dropDeploymentBusLogins(this.stack, this.database).catch(() => undefined);
    }
  }
}

module.exports = {
  Deployment,
  Toxiproxy,
  readStackEnv,
  stackScript,
  SERVICES,
  TOPICS,
  STACK_DIR,
  LOG_ROOT,
};
