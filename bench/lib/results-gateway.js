'use strict';
/* global fetch, setTimeout */
/**
 * 3. Gateway overhead of results reads (bench/results.bench.js): the same pages read directly from the results
 * service and through the gateway, on a standalone stack in this process or on a distributed deployment.
 * `o` holds the bench's settings: { root, shared, subject, readers, requests, rounds, page, fmt }.
 */
const path = require('node:path');
const { useGrants, frameValue, taskCreated, endOf } = require('./results-messages');
const { measureAlternating } = require('./read-load');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Feeds the frames of a few tasks owned by SUBJECT through `bus` (task events, frames, end markers),
 * waits until the results service at `resultsUrl` serves them, then issues the same page reads
 * directly to it (signed identity) and through the gateway at `gatewayUrl` (API key), each with
 * READERS concurrent readers, and prints the ratio gateway/direct of p50 and p99 (target <= 1.3), which it returns.
 */
async function compareThroughGateway(o, { where, bus, signer, resultsUrl, gatewayUrl, key }) {
  const {
    shared,
    subject: SUBJECT,
    readers: READERS,
    requests: REQUESTS,
    rounds: ROUNDS,
    page: PAGE,
    fmt,
  } = o;
  const taskIds = Array.from({ length: 4 }, (_, i) => `bench-gw-task-${process.pid}-${i}`);
  const perTask = 1000;
  await bus.publish(
    shared.TOPICS.taskEvents,
    taskIds.map((t) => taskCreated(t, SUBJECT)),
  );
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
  const direct = (i, url) => {
    const { pathname, search } = new URL(url);
    return {
      [shared.IDENTITY_HEADER]: shared.signIdentity(
        signer,
        { subject: SUBJECT, requestId: `bench-${i}` },
        'results',
        { method: 'GET', target: `${pathname}${search}` },
      ),
    };
  };
  // Wait until the last frame of every task is readable.
  for (const t of taskIds) {
    for (;;) {
      const url = `${resultsUrl}/v1/vision/tasks/${t}/results?limit=500&cursor=`;
      const r = await fetch(url, { headers: direct(0, url) }).catch(() => undefined);
      const n = r && r.ok ? (await r.json()).items.length : 0;
      if (n >= 500) break;
      await sleep(50);
    }
  }
  const common = { taskIds, readers: READERS, requests: REQUESTS, page: PAGE };
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
  return { p50, p99 };
}

const gatewayLimits = (o) => ({
  GATEWAY_QPS: '100000',
  GATEWAY_BURST: '100000',
  GATEWAY_CONCURRENCY: String(o.readers * 2),
});

/**
 * 3. Gateway overhead, standalone: a whole standalone stack in this process (every service, the
 * gateway and this client share one event loop).
 */
async function benchGatewayOverhead(o) {
  const { root, shared, subject: SUBJECT } = o;
  const os = require('node:os');
  const fs = require('node:fs');
  const { startStandalone } = require(path.join(root, 'apps/standalone/dist/index.js'));
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
      ...gatewayLimits(o),
    },
  });
  try {
    return await compareThroughGateway(o, {
      where: 'standalone stack',
      bus: stack.bus,
      signer: shared.loadCallingIdentity(stack.env.VISION_IDENTITY_DIR, 'gateway').signer,
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
async function benchGatewayDistributed(o) {
  const { root, shared, subject: SUBJECT } = o;
  const { Deployment } = require(path.join(root, 'scripts/distributed/launcher.js'));
  const key = 'bench-results-key-0123456789';
  const deployment = new Deployment({ keys: `${key}:${SUBJECT}`, logLevel: 'warn', env: gatewayLimits(o) });
  await deployment.start();
  // Frames under tasks' grants, signed with this deployment's tasks key.
  useGrants(shared, shared.loadCallingIdentity(deployment.identityDirs.tasks, 'tasks').signer);
  // The bench publishes task events and frames both (tasks' and inference's topics): as the broker's super user.
  const bus = new shared.KafkaBus({
    brokers: [deployment.stack.kafkaBrokers],
    clientId: 'results-bench',
    sasl: deployment.stack.kafkaSasl,
  });
  try {
    return await compareThroughGateway(o, {
      where: 'distributed deployment',
      bus,
      // The gateway's key, from the launcher's per-service identity directories.
      signer: shared.loadCallingIdentity(deployment.identityDirs.gateway, 'gateway').signer,
      resultsUrl: deployment.procs.results[0].url,
      gatewayUrl: deployment.url,
      key,
    });
  } finally {
    await bus.close();
    await deployment.close();
  }
}

module.exports = { compareThroughGateway, benchGatewayOverhead, benchGatewayDistributed };
