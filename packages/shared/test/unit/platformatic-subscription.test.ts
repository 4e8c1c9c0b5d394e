import { Readable } from 'node:stream';
import type * as PlatformaticSubscription from '../../src/bus/platformatic-subscription';
import type { IncomingMessage } from '../../src/bus/port';

/**
 * The batch loop of the platformatic subscription against a stand-in for @platformatic/kafka's consumer and its
 * record stream (the real client runs in test/distributed/kafka-bus.test.ts): what it commits, what it hands over
 * again, and how it closes.
 */
interface FakeRecord {
  topic: string;
  partition: number;
  offset: bigint;
  key: Buffer;
  value: Buffer;
  headerEntries: [Buffer, Buffer][];
  commit: jest.Mock<Promise<void>, []>;
}

class MockStream extends Readable {
  constructor() {
    super({ objectMode: true, read: () => undefined });
  }
}

class MockConsumer {
  static made: MockConsumer[] = [];
  readonly stream = new MockStream();
  assignments: { topic: string; partitions: number[] }[] | null = [{ topic: 't', partitions: [0, 1] }];
  readonly closes: boolean[] = [];
  private readonly listeners = new Map<string, ((...args: unknown[]) => void)[]>();
  constructor(readonly options: Record<string, unknown>) {
    MockConsumer.made.push(this);
  }
  on(event: string, fn: (...args: unknown[]) => void): this {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), fn]);
    return this;
  }
  async consume(): Promise<MockStream> {
    return this.stream;
  }
  async listOffsets(): Promise<Map<string, bigint[]>> {
    return new Map([['t', [10n, 10n]]]);
  }
  async close(force?: boolean): Promise<void> {
    this.closes.push(force === true);
    this.stream.destroy();
  }
}

jest.mock('@platformatic/kafka', () => ({
  Consumer: MockConsumer,
  MessagesStreamModes: { COMMITTED: 'committed' },
  MessagesStreamFallbackModes: { EARLIEST: 'earliest', LATEST: 'latest' },
}));

type Subscription = typeof PlatformaticSubscription;
/** Loaded on first use, after the stand-ins above are defined (jest.mock is hoisted above the imports). */
const startPlatformaticSubscription: Subscription['startPlatformaticSubscription'] = (...args) =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require('../../src/bus/platformatic-subscription') as Subscription).startPlatformaticSubscription(...args);

const record = (partition: number, offset: number, n: string): FakeRecord => ({
  topic: 't',
  partition,
  offset: BigInt(offset),
  key: Buffer.from(`k${n}`),
  value: Buffer.from(JSON.stringify({ n })),
  headerEntries: [[Buffer.from('h'), Buffer.from(n)]],
  commit: jest.fn(async () => undefined),
});

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!cond()) throw new Error(`timed out waiting for ${what}`);
}

const deps = { brokers: ['127.0.0.1:9'], clientId: 'c', retryBackoffMs: 5 };

describe('the platformatic subscription', () => {
  beforeEach(() => {
    MockConsumer.made = [];
  });

  it('hands each partition over in order, one run at a time, and commits a run once its handler resolved', async () => {
    const seen: string[][] = [];
    const sub = await startPlatformaticSubscription(deps, {
      topic: 't',
      group: 'g',
      handleBatch: async (messages: IncomingMessage[]) => {
        seen.push(messages.map((m) => `${m.partition}:${m.offset}:${(m.value as { n: string }).n}`));
      },
    });
    const consumer = MockConsumer.made[0];
    expect(consumer.options).toMatchObject({
      groupId: 'g',
      autocommit: false,
      heartbeatInterval: 1000,
      maxWaitTime: 1000,
      protocols: [{ name: 'VisionSubscriptionRoundRobin', version: 0 }],
    });
    const records = [record(0, 0, 'a'), record(1, 0, 'b'), record(0, 1, 'c')];
    for (const r of records) consumer.stream.push(r);
    await until(() => seen.length === 2, 'two runs');
    expect(seen).toEqual([['0:0:a', '0:1:c'], ['1:0:b']]);
    expect(records[0].commit).not.toHaveBeenCalled();
    expect(records[2].commit).toHaveBeenCalledTimes(1);
    expect(records[1].commit).toHaveBeenCalledTimes(1);
    await sub.close();
    expect(consumer.closes).toEqual([true]);
  });

  it('hands a rejected run over again while the partition is its own, and commits it once handled', async () => {
    let calls = 0;
    const sub = await startPlatformaticSubscription(deps, {
      topic: 't',
      group: 'g',
      handleBatch: async () => {
        calls++;
        if (calls < 3) throw new Error('transient');
      },
    });
    const r = record(0, 4, 'x');
    MockConsumer.made[0].stream.push(r);
    await until(() => r.commit.mock.calls.length === 1, 'the commit');
    expect(calls).toBe(3);
    await sub.close();
  });

  it('drops a rejected run without committing once the partition went to another member', async () => {
    const handled: number[] = [];
    const sub = await startPlatformaticSubscription(deps, {
      topic: 't',
      group: 'g',
      handleBatch: async (messages: IncomingMessage[]) => {
        handled.push(messages[0].partition);
        if (messages[0].partition === 0) {
          MockConsumer.made[0].assignments = [{ topic: 't', partitions: [1] }];
          throw new Error('transient');
        }
      },
    });
    const dropped = record(0, 0, 'x');
    const next = record(1, 0, 'y');
    MockConsumer.made[0].stream.push(dropped);
    MockConsumer.made[0].stream.push(next);
    await until(() => next.commit.mock.calls.length === 1, "the next partition's commit");
    expect(handled).toEqual([0, 1]);
    expect(dropped.commit).not.toHaveBeenCalled();
    await sub.close();
  });

  it('waits on close for the run in flight, so its commit lands before the member leaves', async () => {
    let release: (() => void) | undefined;
    const sub = await startPlatformaticSubscription(deps, {
      topic: 't',
      group: 'g',
      handleBatch: () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
    });
    const consumer = MockConsumer.made[0];
    const r = record(0, 0, 'x');
    consumer.stream.push(r);
    await until(() => release !== undefined, 'the handler to start');
    const closing = sub.close();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(consumer.closes).toEqual([]);
    release?.();
    await closing;
    expect(r.commit).toHaveBeenCalledTimes(1);
    expect(consumer.closes).toEqual([true]);
  });

  it('replaces a consumer whose stream ended while the subscription is open', async () => {
    const sub = await startPlatformaticSubscription(deps, {
      topic: 't',
      group: 'g',
      handleBatch: async () => undefined,
    });
    MockConsumer.made[0].stream.destroy();
    await until(() => MockConsumer.made.length === 2, 'a new consumer');
    expect(MockConsumer.made[0].closes).toEqual([true]);
    await sub.close();
    expect(MockConsumer.made[1].closes).toEqual([true]);
  }, 10_000);
});
