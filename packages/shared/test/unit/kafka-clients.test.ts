import type { ClusterMetadata, ExtendedGroupProtocolSubscription } from '@platformatic/kafka';
import { createBus } from '../../src/bus/bus-factory';
import { assignBySubscription } from '../../src/bus/kafka-assigner';
import { KafkaBus } from '../../src/bus/kafka-bus';
import { decodeHeaders, decodeValue } from '../../src/bus/kafka-message';
import { PlatformaticKafkaBus } from '../../src/bus/platformatic-bus';
import { byPartition, platformaticAssigner } from '../../src/bus/platformatic-subscription';
import { commonShape, loadConfig } from '../../src/config/config';

describe('the Kafka bus clients', () => {
  it('KAFKA_CLIENT picks the client of the distributed bus, kafkajs by default', async () => {
    const distributed = { VISION_MODE: 'distributed' as const, KAFKA_BROKERS: ['127.0.0.1:9'] };
    const byDefault = createBus(distributed, { clientId: 't' });
    const kafkajs = createBus({ ...distributed, KAFKA_CLIENT: 'kafkajs' }, { clientId: 't' });
    const platformatic = createBus({ ...distributed, KAFKA_CLIENT: 'platformatic' }, { clientId: 't' });
    expect(byDefault).toBeInstanceOf(KafkaBus);
    expect(kafkajs).toBeInstanceOf(KafkaBus);
    expect(platformatic).toBeInstanceOf(PlatformaticKafkaBus);
    expect(platformatic.kind).toBe('kafka');
    for (const b of [byDefault, kafkajs, platformatic]) await b.close();
    expect(loadConfig(commonShape, {}).KAFKA_CLIENT).toBe('kafkajs');
    expect(loadConfig(commonShape, { KAFKA_CLIENT: 'platformatic' }).KAFKA_CLIENT).toBe('platformatic');
    expect(() => loadConfig(commonShape, { KAFKA_CLIENT: 'rdkafka' })).toThrow(/KAFKA_CLIENT/);
  });

  it('assigns each topic only to the members that read it, in turn', () => {
    const partitions: Record<string, number[]> = { frames: [2, 0, 1, 3], events: [1, 0] };
    const got = assignBySubscription(
      [
        { id: 'm2', topics: ['frames'] },
        { id: 'm1', topics: ['frames'] },
        { id: 'm3', topics: ['events'] },
        { id: 'idle', topics: ['other'] },
      ],
      (t) => partitions[t] ?? [],
    );
    expect(Object.fromEntries(got)).toEqual({
      m1: { frames: [0, 2] },
      m2: { frames: [1, 3] },
      m3: { events: [0, 1] },
      idle: {},
    });
  });

  it('gives platformatic the same assignment, from the members and the cluster metadata it hands over', () => {
    const member = (memberId: string, topics: string[]): [string, ExtendedGroupProtocolSubscription] => [
      memberId,
      { memberId, topics, version: 0 },
    ];
    const topic = (partitionsCount: number) => ({ id: '', partitions: [], partitionsCount, lastUpdate: 0 });
    const metadata: ClusterMetadata = {
      id: 'c',
      brokers: new Map(),
      controllerId: 1,
      lastUpdate: 0,
      topics: new Map([
        ['frames', topic(3)],
        ['events', topic(2)],
      ]),
    };
    const members = new Map([member('b', ['frames']), member('a', ['frames']), member('c', ['events'])]);
    const got = platformaticAssigner('a', members, new Set(['frames']), metadata);
    const plain = Object.fromEntries(
      got.map((g) => [g.memberId, Object.fromEntries([...g.assignments].map(([t, a]) => [t, a.partitions]))]),
    );
    expect(plain).toEqual({ a: { frames: [0, 2] }, b: { frames: [1] }, c: { events: [0, 1] } });
    for (const g of got) for (const [t, a] of g.assignments) expect(a.topic).toBe(t);
  });

  it('splits what a stream read into runs of one partition, each in its order', () => {
    const read = [
      { partition: 1, n: 1 },
      { partition: 0, n: 2 },
      { partition: 1, n: 3 },
      { partition: 0, n: 4 },
      { partition: 2, n: 5 },
    ];
    expect(byPartition(read).map((run) => run.map((r) => r.n))).toEqual([[1, 3], [2, 4], [5]]);
  });

  it('decodes values and headers the same way for both clients', () => {
    expect(decodeValue(Buffer.from('{"a":1}'))).toEqual({ a: 1 });
    expect(decodeValue(Buffer.from('not json'))).toBe('not json');
    expect(decodeValue(null)).toBeNull();
    const text = { traceparent: '00-a-b-01', retry: '2' };
    expect(decodeHeaders({ traceparent: Buffer.from('00-a-b-01'), retry: ['1', '2'] })).toEqual(text);
    expect(
      decodeHeaders([
        [Buffer.from('traceparent'), Buffer.from('00-a-b-01')],
        [Buffer.from('retry'), Buffer.from('1')],
        [Buffer.from('retry'), Buffer.from('2')],
      ]),
    ).toEqual(text);
    expect(decodeHeaders(undefined)).toEqual({});
  });
});
