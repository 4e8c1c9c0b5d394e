import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { createKafkaBus } from '../../packages/shared/src/bus/bus-factory';
import { ensureTopics } from '../../packages/shared/src/bus/kafka-bus';
import type { Bus, IncomingMessage } from '../../packages/shared/src/bus/port';
import { readStackEnv } from '../../scripts/distributed/launcher';
import { describeDistributed, waitFor } from './support';

// The bus's contract on both of its Kafka clients (KAFKA_CLIENT, docs/KAFKA-CLIENTS.md), each on the
// broker of the run (Kafka 3.9 in the distributed suite, 4.1 in scripts/test-kafka-current.sh).
describe.each(['kafkajs', 'platformatic'] as const)('KAFKA_CLIENT=%s', (client) => {
  describeDistributed('the Kafka bus on a real broker', () => {
    const stack = process.env.E2E_STACK === 'distributed' ? readStackEnv() : undefined;
    const brokers = stack ? [stack.kafkaBrokers] : [];
    // The broker's super user: these topics and groups are the test's own, in no service's grant.
    const sasl = stack?.kafkaSasl;
    const suffix = randomBytes(4).toString('hex');
    const topicA = `vision.test-a-${suffix}`;
    const topicB = `vision.test-b-${suffix}`;
    const buses: Bus[] = [];
    const bus = () => {
      const b = createKafkaBus(client, { brokers, sasl, clientId: `test-${suffix}`, retryBackoffMs: 100 });
      buses.push(b);
      return b;
    };

    beforeAll(async () => {
      expect(await ensureTopics(brokers, [topicA, topicB], 3, { sasl })).toBe(true);
      expect(await ensureTopics(brokers, [topicA, topicB], 3, { sasl })).toBe(false);
    }, 60_000);
    afterAll(async () => {
      for (const b of buses) await b.close();
      const admin = new Kafka({ brokers, sasl, logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      await admin.deleteTopics({ topics: [topicA, topicB] }).catch(() => undefined);
      await admin.disconnect();
    });

    it('delivers both topics to one group whose consumers read one topic each, redelivering a rejected batch', async () => {
      const group = `g-${suffix}`;
      const got: Record<string, string[]> = { [topicA]: [], [topicB]: [] };
      let failOnce = true;
      const handler = (topic: string) => async (messages: IncomingMessage[]) => {
        if (topic === topicB && failOnce) {
          failOnce = false;
          throw new Error('transient');
        }
        for (const m of messages) {
          expect(m.topic).toBe(topic);
          got[topic].push((m.value as { n: string }).n);
        }
      };
      const consumer = bus();
      await consumer.subscribe({ topic: topicA, group, fromBeginning: true, handleBatch: handler(topicA) });
      await consumer.subscribe({ topic: topicB, group, fromBeginning: true, handleBatch: handler(topicB) });
      const producer = bus();
      await producer.check();
      for (let i = 0; i < 20; i++) {
        await producer.publish(topicA, [{ key: `k${i % 5}`, value: { n: `a${i}` } }]);
        await producer.publish(topicB, [{ key: `k${i % 5}`, value: { n: `b${i}` } }]);
      }
      await waitFor(
        'every message of both topics',
        async () => (got[topicA].length >= 20 && got[topicB].length >= 20 ? true : undefined),
        60_000,
      );
      expect(new Set(got[topicA]).size).toBe(20);
      expect(new Set(got[topicB]).size).toBe(20);
      // Per key, order is kept.
      for (const [prefix, list] of [['a', got[topicA]] as const, ['b', got[topicB]] as const]) {
        for (let k = 0; k < 5; k++) {
          const ofKey = list.filter((n) => Number(n.slice(1)) % 5 === k);
          const unique = ofKey.filter((n, i) => ofKey.indexOf(n) === i);
          expect(unique).toEqual([...unique].sort((x, y) => Number(x.slice(1)) - Number(y.slice(1))));
          expect(unique[0].startsWith(prefix)).toBe(true);
        }
      }
      expect(failOnce).toBe(false);
    }, 120_000);

    it('hands a batch over again after its handler threw a TypeError (kafkajs: the crashed consumer is replaced)', async () => {
      // kafkajs restarts a crashed consumer only for errors it deems retriable; a TypeError (from a handler, or from
      // kafkajs itself in a rebalance race) would leave the process out of the group for good.
      const group = `g-crash-${suffix}`;
      const got: string[] = [];
      let throws = 0;
      const consumer = bus();
      await consumer.subscribe({
        topic: topicA,
        group,
        fromBeginning: true,
        handleBatch: async (messages) => {
          if (throws === 0) {
            throws++;
            throw new TypeError("Cannot read properties of undefined (reading '0')");
          }
          for (const m of messages) got.push((m.value as { n: string }).n);
        },
      });
      const producer = bus();
      for (let i = 0; i < 5; i++) await producer.publish(topicA, [{ key: `c${i}`, value: { n: `c${i}` } }]);
      const mine = () => new Set(got.filter((n) => n.startsWith('c'))).size;
      await waitFor('every message after the crash', async () => (mine() === 5 ? true : undefined), 60_000);
      expect(throws).toBe(1);
    }, 120_000);
    it('commits what it handled, and a closed member leaves its group at once', async () => {
      const group = `g-leave-${suffix}`;
      const got: { member: string; n: string }[] = [];
      const member = async (name: string) => {
        const b = bus();
        await b.subscribe({
          topic: topicB,
          group,
          fromBeginning: true,
          handleBatch: async (messages) => {
            for (const m of messages) got.push({ member: name, n: (m.value as { n: string }).n });
          },
        });
        return b;
      };
      const seen = (prefix: string, name?: string) =>
        new Set(got.filter((g) => g.n.startsWith(prefix) && (!name || g.member === name)).map((g) => g.n))
          .size;
      const one = await member('one');
      const two = await member('two');
      await waitFor(
        'both members to read what the topic held',
        async () => (seen('b') === 20 ? true : undefined),
        60_000,
      );

      // A member that did not leave would keep its partitions until its session (30 s) ends: the one left reads
      // every partition well before that.
      await two.close();
      const producer = bus();
      for (let i = 0; i < 12; i++) await producer.publish(topicB, [{ key: `l${i}`, value: { n: `l${i}` } }]);
      await waitFor(
        'the member left to read every partition',
        async () => (seen('l', 'one') === 12 ? true : undefined),
        20_000,
      );

      // What was handled was committed: a new member of the group starts after it.
      await one.close();
      await member('three');
      await producer.publish(topicB, [{ key: 'z', value: { n: 'z0' } }]);
      await waitFor(
        'the new member to read the new message',
        async () => (seen('z', 'three') === 1 ? true : undefined),
        60_000,
      );
      expect(got.filter((g) => g.member === 'three').map((g) => g.n)).toEqual(['z0']);
    }, 180_000);
  });
});
