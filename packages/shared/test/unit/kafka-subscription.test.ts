import type { Kafka } from 'kafkajs';
import { startKafkaSubscription } from '../../src/bus/kafka-subscription';

/**
 * How the kafkajs subscription answers its consumer's CRASH event, against a stand-in kafkajs client (the real one
 * runs in test/distributed/kafka-bus.test.ts and kafka-restart.test.ts): a crash kafkajs restarts itself is left to
 * it, one it gives up on gets a new consumer after the backoff, and close disconnects the consumer of the moment.
 */
class FakeConsumer {
  readonly events = { GROUP_JOIN: 'consumer.group_join', CRASH: 'consumer.crash' };
  readonly listeners = new Map<string, ((e: { payload: unknown }) => void)[]>();
  disconnects = 0;
  constructor(readonly options: Record<string, unknown>) {}
  on(event: string, fn: (e: { payload: unknown }) => void): void {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), fn]);
  }
  emit(event: string, payload: unknown): void {
    for (const fn of this.listeners.get(event) ?? []) fn({ payload });
  }
  connect = async () => undefined;
  subscribe = async () => undefined;
  run = async () => undefined;
  disconnect = async () => {
    this.disconnects++;
  };
}

function fakeKafka(): { kafka: Kafka; made: FakeConsumer[] } {
  const made: FakeConsumer[] = [];
  const kafka = {
    consumer: (options: Record<string, unknown>) => {
      const c = new FakeConsumer(options);
      made.push(c);
      return c;
    },
  } as unknown as Kafka;
  return { kafka, made };
}

describe('the kafkajs subscription', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('replaces a consumer that kafkajs stopped for good, and leaves a restarting one to kafkajs', async () => {
    const { kafka, made } = fakeKafka();
    const sub = await startKafkaSubscription(
      { kafka, retryBackoffMs: 5 },
      { topic: 't', group: 'g', handleBatch: async () => undefined },
    );
    expect(made[0].options).toMatchObject({ groupId: 'g', heartbeatInterval: 1000, maxWaitTimeInMs: 1000 });

    made[0].emit('consumer.crash', { restart: true, error: new Error('retriable') });
    await jest.advanceTimersByTimeAsync(60_000);
    expect(made).toHaveLength(1);

    made[0].emit('consumer.crash', { restart: false, error: new TypeError('handler bug') });
    await jest.advanceTimersByTimeAsync(999);
    expect(made).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(made).toHaveLength(2);
    // kafkajs disconnected the crashed one itself; close disconnects the replacement only.
    await sub.close();
    expect(made.map((c) => c.disconnects)).toEqual([0, 1]);
  });
});
