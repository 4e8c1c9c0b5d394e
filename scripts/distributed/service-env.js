'use strict';
/** The environment and the log files of a deployment's processes (scripts/distributed/launcher.js). */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { REPO, sleep } = require('./stack-servers');

/**
 * The environment shared by every service of deployment `d` (the peers' URLs are added as they start), over the
 * given links to Postgres, Kafka, Redis and S3 (direct, or toxiproxy's addresses).
 */
function serviceEnv(d, links) {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    VISION_MODE: 'distributed',
    LOG_LEVEL: d.options.logLevel || process.env.E2E_LOG_LEVEL || 'warn',
    VISION_DATA_DIR: d.dataDir,
    KAFKA_BROKERS: links.kafka,
    REDIS_URL: links.redis,
    S3_ENDPOINT: links.s3,
    S3_ACCESS_KEY: d.stack.s3AccessKey,
    S3_SECRET_KEY: d.stack.s3SecretKey,
    S3_BUCKET: d.bucket,
    S3_REGION: 'us-east-1',
    VISION_MODELS_DIR: process.env.VISION_MODELS_DIR || path.resolve(REPO, '../shared/models'),
    STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
    // A stream's probe on a test machine whose cores are busy (the chart's node runs beside this suite) may take
    // longer than the default 5 s: a live task's creation would be refused as stream_unreachable.
    TASKS_PROBE_TIMEOUT_MS: '45000',
    TASKS_ADMIN_TOKEN: `admin-${d.secret}`,
    HOST: '127.0.0.1',
    KAFKAJS_NO_PARTITIONER_WARNING: '1',
    // The bus's Kafka client (docs/CONFIGURATION.md): the test run's KAFKA_CLIENT reaches every service.
    ...(process.env.KAFKA_CLIENT ? { KAFKA_CLIENT: process.env.KAFKA_CLIENT } : {}),
    // Spans go to the stack's Jaeger (or OTEL_EXPORTER_OTLP_ENDPOINT); without either nothing is exported.
    ...(process.env.OTEL_EXPORTER_OTLP_ENDPOINT || d.stack.otlpEndpoint
      ? {
          OTEL_EXPORTER_OTLP_ENDPOINT: process.env.OTEL_EXPORTER_OTLP_ENDPOINT || d.stack.otlpEndpoint,
          OTEL_BSP_SCHEDULE_DELAY: '300',
        }
      : { OTEL_TRACES_EXPORTER: 'none' }),
    // GET /metrics of each process (its METRICS_PORT is set per process), loopback only.
    METRICS_HOST: '127.0.0.1',
    ...(d.options.keys ? { VISION_API_KEYS: d.options.keys } : {}),
    ...d.options.env,
  };
}

/**
 * Starts one service of deployment `d` as a child process of this one, its output appended to <logDir>/<label>.log.
 * loopback.js is preloaded: the services bind the wildcard address in distributed mode (their containers' ports are
 * published); on a test machine they stay on 127.0.0.1.
 */
function spawnProcess(d, p, env, label) {
  const out = fs.openSync(path.join(d.logDir, `${label}.log`), 'a');
  const child = spawn(
    process.execPath,
    ['--require', path.join(__dirname, 'loopback.js'), path.join(REPO, `services/${p.name}/dist/main.js`)],
    { cwd: REPO, env, stdio: ['ignore', out, out] },
  );
  fs.closeSync(out);
  p.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return child;
}

/** Lists every service's GET /metrics for the stack's Prometheus (labels service, deployment, replica). */
function writeScrapeTargets(d) {
  const file = d.targetsFile;
  if (!file || !fs.existsSync(path.dirname(file))) return;
  const groups = Object.values(d.procs)
    .flat()
    .map((p) => ({
      targets: [`127.0.0.1:${p.metricsPort}`],
      labels: { service: p.name, deployment: d.id, replica: String(p.index) },
    }));
  // Written whole then renamed: Prometheus never reads half a file.
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(groups, null, 2));
  fs.renameSync(`${file}.tmp`, file);
}

/** The last `lines` lines of <logDir>/<label>.log ('' when there is none). */
function tailLog(logDir, label, lines = 30) {
  try {
    return fs
      .readFileSync(path.join(logDir, `${label}.log`), 'utf8')
      .split('\n')
      .slice(-lines)
      .join('\n');
  } catch {
    return '';
  }
}

/** Runs a command in the repository to completion, its output appended to <logDir>/<label>.log. */
function runLogged(logDir, cmd, args, env, label) {
  return new Promise((resolve, reject) => {
    const out = fs.openSync(path.join(logDir, `${label}.log`), 'a');
    const child = spawn(cmd, args, { cwd: REPO, env, stdio: ['ignore', out, out] });
    child.on('error', reject);
    child.on('exit', (code) => {
      fs.closeSync(out);
      if (code === 0) resolve();
      else reject(new Error(`${label} exited ${code}: ${tailLog(logDir, label)}`));
    });
  });
}

/**
 * Waits until a replica of deployment `d` is started: its /readyz and its metrics endpoint (opened once the service's
 * start has finished) answer 200. Rejects when it exits first (with its log's tail) or after `timeoutMs`.
 */
async function waitServiceReady(d, p, timeoutMs) {
  const end = Date.now() + timeoutMs;
  let last;
  for (let i = 0; ; i++) {
    if (d.containers && i % 10 === 0) await d.containers.refresh(p);
    if (p.child.exitCode !== null || p.child.signalCode !== null)
      throw new Error(`${d.label(p)} exited during start:\n${d.tail(d.label(p))}`);
    try {
      const res = await fetch(`${p.url}/readyz`, { signal: AbortSignal.timeout(5000) });
      last = `${res.status} ${await res.text()}`;
      const metrics = res.ok && (await fetch(p.metricsUrl, { signal: AbortSignal.timeout(5000) }));
      if (metrics) await metrics.arrayBuffer();
      if (metrics && metrics.ok) return;
    } catch (err) {
      last = String(err);
    }
    if (Date.now() > end) throw new Error(`${d.label(p)} not ready after ${timeoutMs} ms: ${last}`);
    await sleep(200);
  }
}

module.exports = { serviceEnv, runLogged, tailLog, spawnProcess, writeScrapeTargets, waitServiceReady };
