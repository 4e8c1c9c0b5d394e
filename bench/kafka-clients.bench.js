/* global performance */
/**
 * The bus's two Kafka clients against one broker, in one run: kafkajs (KafkaBus) and @platformatic/kafka
 * (PlatformaticKafkaBus), through the Bus port the services use (packages/shared/dist, so `npm run build` first):
 *
 *   node bench/kafka-clients.bench.js [--brokers host:port] [--messages 20000] [--batch 50] [--pings 200]
 *                                     [--rounds 3] [--partitions 6]
 *
 * --brokers defaults to the broker of scripts/stack (its stack.env). Each round runs both clients, in turn (the
 * order alternates between rounds: the shared machine's load drifts and both see it), each on a fresh topic of
 * --partitions partitions (created before timing, deleted after) and a fresh group:
 * 1. throughput: --messages messages of about 300 bytes (a frame's results) over 60 keys, published in awaited
 *    publishes of --batch, by one bus, read by another bus's subscription in its group (from the beginning); the
 *    time from the first publish to the last message handled. Messages per second, end to end and of the
 *    publishing alone.
 * 2. latency: --pings messages published one at a time, each once the one before was handled; the time from the
 *    publish call to its handler. p50 and p99.
 * Prints each round, the medians over the rounds, and the ratios platformatic / kafkajs. Targets (the measure a
 * switch of the default client needs): platformatic's end-to-end throughput >= kafkajs', its p50 latency <=
 * kafkajs', and every message handled by both. Ends with `targets: N met, M missed`. Compare figures only within
 * a run: the machine is shared.
 */
'use strict';
const path = require('node:path');
const { randomBytes } = require('node:crypto');
const { parseArgs } = require('./lib/args');
const { report } = require('./lib/targets');

const root = path.resolve(__dirname, '..');
const { createKafkaBus } = require(path.join(root, 'packages/shared/dist/bus/bus-factory.js'));
const { ensureTopics } = require(path.join(root, 'packages/shared/dist/bus/kafka-bus.js'));
const { Kafka, logLevel } = require('kafkajs');

const args = parseArgs(process.argv.slice(2));
const num = (name, dflt) => (args[name] === undefined ? dflt : Number(args[name]));
const MESSAGES = num('messages', 20_000);
const BATCH = num('batch', 50);
const PINGS = num('pings', 200);
const ROUNDS = num('rounds', 3);
const PARTITIONS = num('partitions', 6);
const CLIENTS = ['kafkajs', 'platformatic'];

function brokers() {
  if (args.brokers) return args.brokers.split(',');
  const { readStackEnv } = require(path.join(root, 'scripts/distributed/stack-servers.js'));
  return [readStackEnv().kafkaBrokers];
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/** Resolves once `cond()` holds, checking every 2 ms; rejects after `ms` with `what`. */
async function until(cond, what, ms = 120_000) {
  const deadline = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/**
 * The round's topic, before timing. Under heavy load kafkajs' admin may give up waiting for the new partitions'
 * leaders (UNKNOWN_TOPIC_OR_PARTITION); the set-up tries again, up to 5 times.
 */
async function createTopic(list, topic) {
  for (let attempt = 1; ; attempt++) {
    try {
      await ensureTopics(list, [topic], PARTITIONS, { clientId: 'vision-bench' });
      return;
    } catch (err) {
      if (attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

const payload = (i) => ({
  schema: 'bench.v1',
  event_id: `e${i}`,
  frame: i,
  detections: [
    { label: 'person', score: 0.91, box: [0.12, 0.2, 0.31, 0.77] },
    { label: 'car', score: 0.84, box: [0.5, 0.41, 0.93, 0.88] },
  ],
  pad: 'x'.repeat(120),
});

async function runClient(client, list, round) {
  const suffix = `${client}-${round}-${randomBytes(3).toString('hex')}`;
  const topic = `vision.bench-${suffix}`;
  await createTopic(list, topic);
  const producer = createKafkaBus(client, { brokers: list, clientId: `bench-p-${suffix}` });
  const consumer = createKafkaBus(client, { brokers: list, clientId: `bench-c-${suffix}` });
  try {
    await producer.check();
    // 1. throughput
    const seen = new Set();
    let last = 0;
    await consumer.subscribe({
      topic,
      group: `bench-t-${suffix}`,
      fromBeginning: true,
      handleBatch: async (messages) => {
        for (const m of messages) if (typeof m.value?.frame === 'number') seen.add(m.value.frame);
        last = performance.now();
      },
    });
    const t0 = performance.now();
    for (let i = 0; i < MESSAGES; i += BATCH) {
      const n = Math.min(BATCH, MESSAGES - i);
      await producer.publish(
        topic,
        Array.from({ length: n }, (_, k) => ({ key: `k${(i + k) % 60}`, value: payload(i + k) })),
      );
    }
    const published = performance.now();
    await until(() => seen.size === MESSAGES, `${client}: all ${MESSAGES} messages`);
    const throughput = {
      e2e: MESSAGES / ((last - t0) / 1000),
      publish: MESSAGES / ((published - t0) / 1000),
      delivered: seen.size,
    };

    // 2. latency, on a group of its own that starts at the end of the topic
    const pingGroup = `bench-l-${suffix}`;
    const arrived = new Map();
    await consumer.subscribe({
      topic,
      group: pingGroup,
      fromBeginning: false,
      handleBatch: async (messages) => {
        const now = performance.now();
        for (const m of messages) if (m.value && m.value.ping !== undefined) arrived.set(m.value.ping, now);
      },
    });
    // A fresh group starting at the end reads only what is published after it joined: publish warm-up pings
    // until one arrives.
    let warm = 0;
    while (!arrived.has(-1)) {
      await producer.publish(topic, [{ key: 'ping', value: { ping: -1, warm: warm++ } }]);
      await new Promise((r) => setTimeout(r, 100));
      if (warm > 600) throw new Error(`${client}: the latency group never started reading`);
    }
    const latencies = [];
    for (let i = 0; i < PINGS; i++) {
      const sent = performance.now();
      await producer.publish(topic, [{ key: `ping${i % 60}`, value: { ping: i } }]);
      await until(() => arrived.has(i), `${client}: ping ${i}`, 30_000);
      latencies.push(arrived.get(i) - sent);
    }
    return {
      ...throughput,
      pinged: latencies.length,
      p50: quantile(latencies, 0.5),
      p99: quantile(latencies, 0.99),
    };
  } finally {
    await consumer.close();
    await producer.close();
    const admin = new Kafka({ brokers: list, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  }
}

const fmt = (r) =>
  `end-to-end ${r.e2e.toFixed(0)} msg/s, publish ${r.publish.toFixed(0)} msg/s, ` +
  `latency p50 ${r.p50.toFixed(1)} ms p99 ${r.p99.toFixed(1)} ms (${r.delivered}/${MESSAGES} delivered)`;

async function main() {
  const list = brokers();
  console.log(
    `Kafka clients on ${list.join(',')}: ${MESSAGES} messages in publishes of ${BATCH}, ${PINGS} pings, ` +
      `${PARTITIONS} partitions, ${ROUNDS} rounds; Node ${process.version}`,
  );
  const results = { kafkajs: [], platformatic: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? [...CLIENTS].reverse() : CLIENTS;
    for (const client of order) {
      const r = await runClient(client, list, round);
      results[client].push(r);
      console.log(`round ${round + 1} ${client.padEnd(12)} ${fmt(r)}`);
    }
  }
  const med = {};
  for (const client of CLIENTS) {
    const rs = results[client];
    med[client] = {
      e2e: median(rs.map((r) => r.e2e)),
      publish: median(rs.map((r) => r.publish)),
      p50: median(rs.map((r) => r.p50)),
      p99: median(rs.map((r) => r.p99)),
      delivered: Math.min(...rs.map((r) => r.delivered)),
    };
    console.log(`median  ${client.padEnd(12)} ${fmt(med[client])}`);
  }
  const k = med.kafkajs;
  const p = med.platformatic;
  const ratio = (a, b) => (a / b).toFixed(2);
  console.log(
    `ratios platformatic/kafkajs: end-to-end throughput ${ratio(p.e2e, k.e2e)}, publish throughput ` +
      `${ratio(p.publish, k.publish)}, latency p50 ${ratio(p.p50, k.p50)}, p99 ${ratio(p.p99, k.p99)}`,
  );
  const { missed } = report([
    {
      name: 'platformatic end-to-end throughput / kafkajs',
      value: ratio(p.e2e, k.e2e),
      limit: '>= 1.00',
      ok: p.e2e >= k.e2e,
    },
    {
      name: 'platformatic latency p50 / kafkajs',
      value: ratio(p.p50, k.p50),
      limit: '<= 1.00',
      ok: p.p50 <= k.p50,
    },
    {
      name: 'every message handled by both clients',
      value: `${Math.min(k.delivered, p.delivered)}/${MESSAGES}`,
      limit: `${MESSAGES}/${MESSAGES}`,
      ok: k.delivered === MESSAGES && p.delivered === MESSAGES,
    },
  ]);
  process.exitCode = missed ? 1 : 0;
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});
