'use strict';
/**
 * The pieces of work bench/cost-floor.bench.js measures alone, each with the library a service uses for it. Each
 * piece: `round(count)` does the work `count` times (the hop and the relay: each of `images` `count` times) and
 * resolves with the CPU ms of a child process it used, if any; `close()` removes what it made.
 */
const path = require('node:path');
const http = require('node:http');
const { fork } = require('node:child_process');
const { randomBytes } = require('node:crypto');

if (require.main === module && process.argv[2] === '--hop-server') {
  // The receiving side of a hop: reads each body whole, answers a short JSON; its own CPU on GET /cpu.
  const server = http.createServer((req, res) => {
    if (req.url === '/cpu') {
      const c = process.cpuUsage();
      res.end(String((c.user + c.system) / 1000));
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ results: [{ seq: 0, bytes: body.length, objects: [] }] }));
    });
  });
  server.keepAliveTimeout = 60_000;
  // Ends with the bench, however the bench ends.
  process.on('disconnect', () => process.exit(0));
  server.listen(0, '127.0.0.1', () => process.send(server.address().port));
  return;
}

const root = path.resolve(__dirname, '../..');
const { request, Agent } = require('undici');
const knex = require('knex');
const { MinioObjectStore } = require(path.join(root, 'packages/shared/dist'));
const { createKafkaBus } = require(path.join(root, 'packages/shared/dist/bus/bus-factory.js'));
const { ensureTopics } = require(path.join(root, 'packages/shared/dist/bus/kafka-bus.js'));

/** An image over HTTP to a node:http server in a child process (its CPU is what `round` resolves with). */
async function startHop(env, images) {
  const child = fork(__filename, ['--hop-server'], { stdio: 'inherit' });
  const port = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('error', reject);
  });
  const agent = new Agent({ keepAliveTimeout: 60_000 });
  const base = `http://127.0.0.1:${port}`;
  const childCpu = async () =>
    Number(await (await request(`${base}/cpu`, { dispatcher: agent })).body.text());
  const post = async (img) => {
    const r = await request(`${base}/detect`, {
      method: 'POST',
      body: img,
      dispatcher: agent,
      headers: { 'content-type': 'application/octet-stream' },
    });
    await r.body.json();
  };
  return {
    /** One round: every image `times` times; the child's CPU is added to this process's. */
    round: async (times) => {
      const before = await childCpu();
      for (let k = 0; k < times; k++) for (const img of images) await post(img);
      return (await childCpu()) - before;
    },
    close: async () => {
      child.kill();
      await agent.close();
    },
  };
}

/** An image written to the S3 server through MinioObjectStore. */
async function startRelay(env, images) {
  const store = new MinioObjectStore({
    endpoint: env.s3Endpoint,
    accessKey: env.s3AccessKey,
    secretKey: env.s3SecretKey,
    region: 'us-east-1',
    bucket: 'vision-cost-floor',
  });
  const keys = [];
  return {
    round: async (times) => {
      for (let k = 0; k < times; k++)
        for (const [i, img] of images.entries()) {
          const key = `floor/${randomBytes(6).toString('hex')}/${i}.jpg`;
          await store.put(key, img, { contentType: 'image/jpeg', size: img.length });
          keys.push(key);
        }
    },
    close: () => store.delete(keys.splice(0)),
  };
}

/** An INSERT of a call's results into a table of its own (dropped by `close`). */
async function startStatements(env, images) {
  const db = knex({ client: 'pg', connection: env.pgUrl, pool: { min: 1, max: 2 } });
  const table = `cost_floor_${randomBytes(4).toString('hex')}`;
  await db.schema.createTable(table, (t) => {
    t.bigIncrements('id');
    t.text('key').notNullable();
    t.jsonb('results').notNullable();
  });
  const results = images.map((_, seq) => ({
    seq,
    status: 'succeeded',
    objects: [{ label: 'person', score: 0.91, box: { x1: 12, y1: 20, x2: 310, y2: 770 } }],
  }));
  return {
    round: async (count) => {
      for (let i = 0; i < count; i++)
        await db(table).insert({ key: randomBytes(8).toString('hex'), results: JSON.stringify(results) });
    },
    close: async () => {
      await db.schema.dropTableIfExists(table);
      await db.destroy();
    },
  };
}

/** A message published by one KafkaBus and handled by another's subscription, one at a time. */
async function startMessages(env) {
  const brokers = [env.kafkaBrokers];
  // One topic for every run (created when missing); each run reads it in a group of its own.
  const topic = 'vision.cost-floor';
  // The stack's broker signs every client in (SASL/SCRAM): the bench uses its super user.
  const sasl = env.kafkaSasl;
  await ensureTopics(brokers, [topic], 1, { clientId: 'vision-bench', sasl });
  const producer = createKafkaBus('kafkajs', { brokers, sasl, clientId: 'cost-floor-p' });
  const consumer = createKafkaBus('kafkajs', { brokers, sasl, clientId: 'cost-floor-c' });
  let started = false;
  /** The handler that resolves each message's wait, by its number. */
  const waiting = new Map();
  await consumer.subscribe({
    topic,
    group: `cost-floor-${randomBytes(3).toString('hex')}`,
    fromBeginning: false,
    handleBatch: async (messages) => {
      started = true;
      for (const m of messages) waiting.get(m.value?.n)?.();
    },
  });
  let n = 0;
  const send = async () => {
    const id = n++;
    const handled = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`message ${id} was not handled`)), 30_000);
      waiting.set(id, () => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve();
      });
    });
    await producer.publish(topic, [{ key: `k${id % 60}`, value: { n: id, pad: 'x'.repeat(260) } }]);
    await handled;
  };
  // A group that starts at the end reads only what is published after it joined.
  for (let tries = 0; !started; tries++) {
    if (tries > 300) throw new Error('the subscription never started reading');
    await producer.publish(topic, [{ key: 'warm', value: { n: -1 - tries } }]);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    round: async (count) => {
      for (let i = 0; i < count; i++) await send();
    },
    close: async () => {
      await consumer.close();
      await producer.close();
    },
  };
}

module.exports = { startHop, startRelay, startStatements, startMessages };
