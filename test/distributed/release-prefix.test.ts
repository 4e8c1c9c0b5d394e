/**
 * Two releases side by side on the stack's real Kafka (SASL/SCRAM-SHA-512, StandardAuthorizer with no ACL meaning no
 * access), each of its own KAFKA_PREFIX (docs/KUBERNETES-LOGINS.md, "Sharing a Kafka cluster"): each is provisioned by the
 * migration Job's script (scripts/bus-principals.js) and runs its services' buses through createKafkaBus, as a
 * service does. Neither release's principals write or read the other's topics or join its groups, each release's
 * consumers get their own release's messages only, and a topic reset of one (the launcher's resetTopics) leaves the
 * other's topics and messages as they were.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import {
  BUS_GRANTS,
  BUS_SERVICES,
  GROUPS,
  TOPICS,
  busName,
  busTopics,
  createKafkaBus,
  removeBusPrincipals,
  type Bus,
  type BusService,
  type IncomingMessage,
} from '@vision/shared';
import { readStackEnv } from '../../scripts/distributed/launcher';
import { resetTopics } from '../../scripts/distributed/stack-servers';
import { describeDistributed, waitFor } from './support';
import { joinOutcome, kafkaAs, produceOutcome } from '../helpers/kafka-outcome';

jest.setTimeout(300_000);

interface Release {
  prefix: string;
  passwords: Record<BusService, string>;
}

describeDistributed('two releases of different prefixes on one Kafka cluster', () => {
  const stack = readStackEnv();
  const brokers = [stack.kafkaBrokers];
  const run = Date.now().toString(36);
  const newRelease = (name: string): Release => ({
    prefix: `${name}${run}.`,
    passwords: Object.fromEntries(
      BUS_SERVICES.map((s) => [s, randomBytes(18).toString('base64url')]),
    ) as Record<BusService, string>,
  });
  const staging = newRelease('staging');
  const prod = newRelease('prod');
  const user = (r: Release, s: BusService) => `${r.prefix}vision-${s}`;
  const as = (r: Release, s: BusService, logs: string[] = []) =>
    kafkaAs(brokers, user(r, s), r.passwords[s], logs, 'release-prefix-test');
  /** A service's bus of release `r`, made as the service makes it (KAFKA_PREFIX, its own principal). */
  const busOf = (r: Release, s: BusService): Bus =>
    createKafkaBus('kafkajs', {
      brokers,
      clientId: `release-prefix-${s}`,
      sasl: { mechanism: 'scram-sha-512', username: user(r, s), password: r.passwords[s] },
      prefix: r.prefix,
    });
  const buses: Bus[] = [];
  const received: Record<string, IncomingMessage[]> = { staging: [], prod: [] };
  let admin: Admin;

  /** Runs the migration Job's bus script for release `r`: its topics (2 partitions) and its principals. */
  function provision(r: Release) {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      KAFKA_BROKERS: stack.kafkaBrokers,
      KAFKA_SASL_USERNAME: stack.kafkaSasl!.username,
      KAFKA_SASL_PASSWORD: stack.kafkaSasl!.password,
      KAFKA_PREFIX: r.prefix,
      TOPIC_PARTITIONS: '2',
    };
    for (const s of BUS_SERVICES) env[`KAFKA_${s.toUpperCase()}_PASSWORD`] = r.passwords[s];
    const out = spawnSync(process.execPath, [path.join(__dirname, '../../scripts/bus-principals.js')], {
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    return { status: out.status, out: `${out.stdout}${out.stderr}` };
  }

  /**
   * The high watermark of each partition of each topic of `prefix`; asked again while a topic just created has no
   * leader yet ("not the leader" from metadata the admin client read before).
   */
  async function offsets(prefix: string): Promise<Record<string, string[]>> {
    const out: Record<string, string[]> = {};
    for (const t of busTopics(prefix))
      out[t] = await waitFor(
        `the offsets of ${t}`,
        () =>
          admin.fetchTopicOffsets(t).then(
            (ps) => ps.map((p) => p.high),
            () => undefined,
          ),
        30_000,
      );
    return out;
  }

  beforeAll(async () => {
    expect(stack.kafkaSasl).toBeDefined();
    admin = new Kafka({
      clientId: 'release-prefix-test',
      brokers,
      sasl: stack.kafkaSasl,
      logLevel: logLevel.NOTHING,
    }).admin();
    await admin.connect();
  });
  afterAll(async () => {
    await Promise.allSettled(buses.map((b) => b.close()));
    if (!admin) return;
    const mine = new Set([...busTopics(staging.prefix), ...busTopics(prod.prefix)]);
    const present = (await admin.listTopics()).filter((t) => mine.has(t));
    if (present.length) await admin.deleteTopics({ topics: present }).catch(() => undefined);
    await admin.disconnect();
    await removeBusPrincipals(
      { brokers, sasl: stack.kafkaSasl },
      [staging, prod].flatMap((r) => BUS_SERVICES.map((s) => user(r, s))),
    );
  });

  it("the migration Job's script creates each release's own topics and principals", async () => {
    for (const r of [staging, prod]) {
      const got = provision(r);
      expect(got).toMatchObject({ status: 0 });
      expect(got.out).toContain('topics created');
      expect(got.out).toContain(`principals: ${BUS_SERVICES.map((s) => `${s}=${user(r, s)}`).join(', ')}`);
    }
    const topics = new Set(await admin.listTopics());
    for (const r of [staging, prod]) for (const t of busTopics(r.prefix)) expect(topics.has(t)).toBe(true);
  });

  it("each release's consumers get their own release's messages only", async () => {
    for (const [name, r] of [
      ['staging', staging],
      ['prod', prod],
    ] as const) {
      const tasks = busOf(r, 'tasks');
      buses.push(tasks);
      await tasks.subscribe({
        topic: TOPICS.imageCalls,
        group: GROUPS.tasksImageCalls,
        fromBeginning: true,
        handleBatch: async (ms) => {
          received[name].push(...ms);
        },
      });
    }
    for (const [name, r] of [
      ['staging', staging],
      ['prod', prod],
    ] as const) {
      const images = busOf(r, 'images');
      buses.push(images);
      await images.publish(TOPICS.imageCalls, [{ key: `k-${name}`, value: { release: name, n: 1 } }]);
    }
    await waitFor(
      'both releases consumed',
      async () => (received.staging.length > 0 && received.prod.length > 0 ? true : undefined),
      60_000,
    );
    // A moment more: a message of the other release would have come by now.
    await new Promise((r) => setTimeout(r, 2000));
    expect(received.staging.map((m) => [m.topic, m.value])).toEqual([
      [busName(staging.prefix, TOPICS.imageCalls), { release: 'staging', n: 1 }],
    ]);
    expect(received.prod.map((m) => [m.topic, m.value])).toEqual([
      [busName(prod.prefix, TOPICS.imageCalls), { release: 'prod', n: 1 }],
    ]);
  });

  it("neither release's principals write the other's topics", async () => {
    const seen: string[] = [];
    const expected: string[] = [];
    for (const [mine, theirs] of [
      [staging, prod],
      [prod, staging],
    ])
      for (const s of BUS_SERVICES) {
        const own: readonly string[] = BUS_GRANTS[s].produce;
        for (const t of Object.values(TOPICS)) {
          seen.push(
            `${user(mine, s)} -> ${busName(theirs.prefix, t)}: ${await produceOutcome(as(mine, s), busName(theirs.prefix, t))}`,
          );
          expected.push(`${user(mine, s)} -> ${busName(theirs.prefix, t)}: TOPIC_AUTHORIZATION_FAILED`);
        }
        // Its own release's topic, as the control.
        if (own[0]) {
          seen.push(
            `${user(mine, s)} -> own ${own[0]}: ${await produceOutcome(as(mine, s), busName(mine.prefix, own[0]))}`,
          );
          expected.push(`${user(mine, s)} -> own ${own[0]}: ok`);
        }
      }
    expect(seen).toEqual(expected);
  });

  it("neither release's principals join the other's groups or read its topics", async () => {
    const seen: string[] = [];
    const expected: string[] = [];
    for (const [mine, theirs] of [
      [staging, prod],
      [prod, staging],
    ])
      for (const s of BUS_SERVICES)
        for (const { group, topics } of BUS_GRANTS[s].consume) {
          const probe = async (g: string, t: string) => {
            const logs: string[] = [];
            return joinOutcome(as(mine, s, logs), logs, g, t);
          };
          const [topic] = topics;
          const who = user(mine, s);
          // The other release's group, reading a topic of its own release that it may read.
          seen.push(
            `${who} in ${busName(theirs.prefix, group)}: ${await probe(busName(theirs.prefix, group), busName(mine.prefix, topic))}`,
          );
          expected.push(`${who} in ${busName(theirs.prefix, group)}: GROUP_AUTHORIZATION_FAILED`);
          // Its own group, reading the other release's topic.
          seen.push(
            `${who} reads ${busName(theirs.prefix, topic)}: ${await probe(busName(mine.prefix, group), busName(theirs.prefix, topic))}`,
          );
          expected.push(`${who} reads ${busName(theirs.prefix, topic)}: TOPIC_AUTHORIZATION_FAILED`);
        }
    expect(seen).toEqual(expected);
  });

  it("a topic reset of one release leaves the other's topics and messages alone", async () => {
    const prodBefore = await offsets(prod.prefix);
    expect(prodBefore[busName(prod.prefix, TOPICS.imageCalls)].some((h) => h !== '0')).toBe(true);
    expect(
      Object.values(await offsets(staging.prefix))
        .flat()
        .some((h) => h !== '0'),
    ).toBe(true);
    await resetTopics(brokers, stack.kafkaSasl, staging.prefix);
    // The reset release's topics are there again, empty; the other's hold what they held.
    expect(
      Object.values(await offsets(staging.prefix))
        .flat()
        .every((h) => h === '0'),
    ).toBe(true);
    expect(await offsets(prod.prefix)).toEqual(prodBefore);
    // And prod's running consumer goes on in its group: its next message arrives, once, and only prod's ever did
    // (besides the probe prod's own images principal wrote above).
    await buses[3].publish(TOPICS.imageCalls, [{ key: 'k-prod', value: { release: 'prod', n: 2 } }]);
    const releaseMessages = () =>
      received.prod
        .map((m) => m.value as { release?: string; n?: number })
        .filter((v) => v.release !== undefined);
    await waitFor(
      'the next prod message',
      async () => (releaseMessages().some((v) => v.n === 2) ? true : undefined),
      60_000,
    );
    expect(releaseMessages()).toEqual([
      { release: 'prod', n: 1 },
      { release: 'prod', n: 2 },
    ]);
    expect(new Set(received.prod.map((m) => m.topic))).toEqual(
      new Set([busName(prod.prefix, TOPICS.imageCalls)]),
    );
  });
});
