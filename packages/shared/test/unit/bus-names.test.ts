import {
  BUS_SERVICES,
  ConfigError,
  GROUPS,
  InProcessBus,
  PrefixedBus,
  TOPICS,
  busAcls,
  busName,
  busTopics,
  commonShape,
  createBus,
  createKafkaBus,
  loadConfig,
  type IncomingMessage,
} from '../../src';

/** Every resource name (topic or group) the ACLs of every service of deployment `prefix` name. */
const aclNames = (prefix: string) =>
  new Set(BUS_SERVICES.flatMap((s) => busAcls(s, `${prefix}vision-${s}`, prefix).map((a) => a.resourceName)));

describe('the names of a deployment on the bus (KAFKA_PREFIX)', () => {
  it('are the plain names with no prefix', () => {
    for (const name of [...Object.values(TOPICS), ...Object.values(GROUPS)])
      expect(busName('', name)).toBe(name);
    expect(busTopics('')).toEqual([
      'vision.frames',
      'vision.task-events',
      'vision.quota-events',
      'vision.image-calls',
    ]);
  });

  it('put the prefix, as it is, before each topic and group', () => {
    expect(busTopics('staging.')).toEqual([
      'staging.vision.frames',
      'staging.vision.task-events',
      'staging.vision.quota-events',
      'staging.vision.image-calls',
    ]);
    expect(busName('prod-eu_1.', GROUPS.results)).toBe('prod-eu_1.results');
  });

  it('refuse a prefix that cannot be part of a topic name', () => {
    for (const bad of ['a b', 'a/b', 'ü.', 'x'.repeat(101), 'a:b'])
      expect(() => busName(bad, TOPICS.frames)).toThrow(/invalid Kafka prefix/);
    expect(busName('x'.repeat(100), 'y')).toHaveLength(101);
  });

  it('come from KAFKA_PREFIX, default none; a bad one is a configuration error', () => {
    expect(loadConfig(commonShape, {}).KAFKA_PREFIX).toBe('');
    expect(loadConfig(commonShape, { KAFKA_PREFIX: 'staging.' }).KAFKA_PREFIX).toBe('staging.');
    expect(() => loadConfig(commonShape, { KAFKA_PREFIX: 'a b' })).toThrow(ConfigError);
    expect(() => loadConfig(commonShape, { KAFKA_PREFIX: 'a b' })).toThrow(/KAFKA_PREFIX/);
  });
});

describe("a deployment's ACLs", () => {
  it('name its own topics and groups, literally; with no prefix, the plain names', () => {
    const plain = aclNames('');
    expect(plain).toEqual(new Set([...Object.values(TOPICS), ...Object.values(GROUPS)]));
    const staging = aclNames('staging.');
    expect(staging).toEqual(new Set([...plain].map((n) => `staging.${n}`)));
    for (const s of BUS_SERVICES)
      for (const a of busAcls(s, 'u', 'staging.')) expect(a.resourcePatternType).toBe(3); // LITERAL
  });

  it('of two prefixes share no topic and no group', () => {
    const a = aclNames('staging.');
    expect([...aclNames('prod.')].filter((n) => a.has(n))).toEqual([]);
    expect([...aclNames('')].filter((n) => a.has(n))).toEqual([]);
  });
});

describe('PrefixedBus', () => {
  /** The messages of `topic` in `group` of `bus`, as they arrive. */
  async function collect(bus: InProcessBus | PrefixedBus, topic: string, group: string) {
    const got: IncomingMessage[] = [];
    await bus.subscribe({
      topic,
      group,
      fromBeginning: true,
      handleBatch: async (ms) => {
        got.push(...ms);
      },
    });
    return got;
  }

  it("publishes and subscribes on the deployment's own topics and groups of the brokers", async () => {
    const brokers = new InProcessBus({ minBackoffMs: 5, maxBackoffMs: 20 });
    try {
      const staging = new PrefixedBus(brokers, 'staging.');
      const prod = new PrefixedBus(brokers, 'prod.');
      expect(staging.kind).toBe('memory');
      const onBrokers = await collect(brokers, 'staging.vision.frames', 'probe');
      const stagingGot = await collect(staging, TOPICS.frames, GROUPS.results);
      const prodGot = await collect(prod, TOPICS.frames, GROUPS.results);
      await staging.publish(TOPICS.frames, [{ key: 't1', value: { n: 1 } }]);
      await prod.publish(TOPICS.frames, [{ key: 't2', value: { n: 2 } }]);
      const deadline = Date.now() + 5000;
      while ((stagingGot.length < 1 || prodGot.length < 1) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 10));
      expect(onBrokers.map((m) => [m.topic, m.value])).toEqual([['staging.vision.frames', { n: 1 }]]);
      expect(stagingGot.map((m) => [m.topic, m.value])).toEqual([['staging.vision.frames', { n: 1 }]]);
      expect(prodGot.map((m) => [m.topic, m.value])).toEqual([['prod.vision.frames', { n: 2 }]]);
    } finally {
      await brokers.close();
    }
  });

  it('is what a Kafka bus of a non-empty KAFKA_PREFIX is; none is the plain bus', async () => {
    const opts = { brokers: ['127.0.0.1:1'], clientId: 't' };
    const plain = createKafkaBus('kafkajs', opts);
    const prefixed = createKafkaBus('platformatic', { ...opts, prefix: 'staging.' });
    const fromConfig = createBus(
      { VISION_MODE: 'distributed', KAFKA_BROKERS: opts.brokers, KAFKA_PREFIX: 'prod.' },
      { clientId: 't' },
    );
    try {
      expect(plain).not.toBeInstanceOf(PrefixedBus);
      expect(prefixed).toBeInstanceOf(PrefixedBus);
      expect((prefixed as PrefixedBus).prefix).toBe('staging.');
      expect((fromConfig as PrefixedBus).prefix).toBe('prod.');
      expect(() => createKafkaBus('kafkajs', { ...opts, prefix: 'a b' })).toThrow(/invalid Kafka prefix/);
    } finally {
      await Promise.all([plain.close(), prefixed.close(), fromConfig.close()]);
    }
  });
});
