import { ConsumerRestarter, type ConsumerRestarterOptions } from '../../src/bus/consumer-restarter';
import type { Logger } from '../../src/telemetry/logger';

/**
 * The restart loop both Kafka clients' subscriptions share, against a stand-in consumer lifecycle on jest's clock:
 * when it opens a replacement, what it stops, and that no failure of a step escapes into the event loop.
 */
interface FakeConsumer {
  id: number;
}

interface Harness {
  restarter: ConsumerRestarter<FakeConsumer>;
  /** When each open() was called (jest's clock), and the consumers stopped with why. */
  opens: number[];
  stops: [number, 'failed' | 'closed'][];
  adopted: number[];
  logged: string[];
  /** What the next open() calls do, in turn; past the list they succeed. */
  plan: (() => Promise<FakeConsumer>)[];
}

function harness(over: Partial<ConsumerRestarterOptions<FakeConsumer>> = {}): Harness {
  let next = 0;
  const logged: string[] = [];
  const note = (_obj: unknown, msg?: string) => logged.push(msg ?? '');
  const logger = { error: note, warn: note, info: note } as unknown as Logger;
  const h: Harness = {
    opens: [],
    stops: [],
    adopted: [],
    logged,
    plan: [],
    restarter: undefined as unknown as ConsumerRestarter<FakeConsumer>,
  };
  h.restarter = new ConsumerRestarter<FakeConsumer>({
    logger,
    where: { group: 'g', topic: 't' },
    open: () => {
      h.opens.push(Date.now());
      const step = h.plan.shift();
      return step ? step() : Promise.resolve({ id: ++next });
    },
    adopted: (c) => {
      h.adopted.push(c.id);
    },
    stop: async (c, why) => {
      h.stops.push([c.id, why]);
    },
    ...over,
  });
  return h;
}

const unreachable = (): Promise<FakeConsumer> => Promise.reject(new Error('broker unreachable'));

describe('the consumer restarter', () => {
  const escaped: unknown[] = [];
  const onEscape = (err: unknown) => escaped.push(err);

  beforeEach(() => {
    jest.useFakeTimers({ now: 0 });
    escaped.length = 0;
    process.on('unhandledRejection', onEscape);
    process.on('uncaughtException', onEscape);
  });
  afterEach(() => {
    process.off('unhandledRejection', onEscape);
    process.off('uncaughtException', onEscape);
    jest.useRealTimers();
  });

  it('replaces a failed consumer after 1 s, doubling while replacements fail, up to 30 s', async () => {
    const h = harness();
    await h.restarter.start();
    expect(h.restarter.current).toEqual({ id: 1 });
    h.plan.push(...Array.from({ length: 6 }, () => unreachable));
    h.restarter.failed({ id: 1 } as FakeConsumer, new Error('stale')); // not the current object: ignored
    expect(h.stops).toEqual([]);

    h.restarter.failed(h.restarter.current as FakeConsumer, new Error('crashed'));
    expect(h.restarter.current).toBeUndefined();
    expect(h.stops).toEqual([[1, 'failed']]);
    await jest.advanceTimersByTimeAsync(200_000);
    // 1 s, then 2, 4, 8, 16, 30, 30 s after each failed open.
    expect(h.opens.slice(1).map((t, i, all) => t - (i === 0 ? 0 : all[i - 1]))).toEqual([
      1000, 2000, 4000, 8000, 16_000, 30_000, 30_000,
    ]);
    expect(h.restarter.current).toEqual({ id: 2 });
    expect(h.adopted).toEqual([1, 2]);
    expect(h.logged).toContain('kafka consumer replaced');
    await h.restarter.close();
    expect(escaped).toEqual([]);
  });

  it('waits the first delay again once a consumer joined its group', async () => {
    const h = harness();
    await h.restarter.start();
    h.plan.push(unreachable, unreachable);
    h.restarter.failed(h.restarter.current as FakeConsumer, new Error('crashed'));
    await jest.advanceTimersByTimeAsync(1000 + 2000 + 4000);
    expect(h.opens).toEqual([0, 1000, 3000, 7000]);
    h.restarter.joined();
    h.restarter.failed(h.restarter.current as FakeConsumer, new Error('crashed again'));
    await jest.advanceTimersByTimeAsync(1000);
    expect(h.opens).toEqual([0, 1000, 3000, 7000, 8000]);
    await h.restarter.close();
  });

  it('opens nothing once closed while a restart waits', async () => {
    const h = harness();
    await h.restarter.start();
    h.restarter.failed(h.restarter.current as FakeConsumer, new Error('crashed'));
    await h.restarter.close();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(h.opens).toEqual([0]);
    expect(h.stops).toEqual([[1, 'failed']]);
    h.restarter.failed({ id: 1 }, new Error('late')); // after close: ignored
    expect(jest.getTimerCount()).toBe(0);
  });

  it('stops, without adopting, a consumer that finished opening after close', async () => {
    const h = harness();
    await h.restarter.start();
    let finish: ((c: FakeConsumer) => void) | undefined;
    h.plan.push(() => new Promise<FakeConsumer>((resolve) => (finish = resolve)));
    h.restarter.failed(h.restarter.current as FakeConsumer, new Error('crashed'));
    await jest.advanceTimersByTimeAsync(1000);
    expect(finish).toBeDefined();
    await h.restarter.close();
    finish?.({ id: 9 });
    await jest.advanceTimersByTimeAsync(0);
    expect(h.stops).toEqual([
      [1, 'failed'],
      [9, 'closed'],
    ]);
    expect(h.adopted).toEqual([1]);
    expect(h.restarter.current).toBeUndefined();
  });

  it('replaces a consumer that failed while it was still opening, once it opens', async () => {
    const h = harness();
    const early = { id: 7 };
    h.plan.push(async () => {
      h.restarter.failed(early, new Error('crashed during the join'));
      return early;
    });
    await h.restarter.start();
    expect(h.restarter.current).toBeUndefined();
    expect(h.stops).toEqual([[7, 'failed']]);
    await jest.advanceTimersByTimeAsync(1000);
    expect(h.restarter.current).toEqual({ id: 1 });
    await h.restarter.close();
  });

  it('keeps every failing step out of the event loop: a throwing adopt or stop is a failure it logs and replaces', async () => {
    let adoptions = 0;
    const h = harness({
      adopted: () => {
        if (++adoptions === 2) throw new TypeError('pump could not start');
      },
      stop: (c) => {
        if (c.id === 2) throw new Error('stop threw');
        return Promise.reject(new Error('stop rejected'));
      },
    });
    await h.restarter.start();
    h.plan.push(unreachable);
    h.restarter.failed(h.restarter.current as FakeConsumer, new Error('crashed'));
    // 1 s: the open rejects; 3 s: consumer 2 opens, its adoption throws, its stop throws; 7 s: consumer 3.
    await jest.advanceTimersByTimeAsync(7000);
    expect(h.opens).toEqual([0, 1000, 3000, 7000]);
    expect(h.restarter.current).toEqual({ id: 3 });
    expect(h.logged).toEqual(
      expect.arrayContaining([
        'could not replace the kafka consumer; trying again',
        'kafka consumer did not stop cleanly',
        'kafka consumer failed; replacing it',
      ]),
    );
    await expect(h.restarter.close()).rejects.toThrow('stop rejected');
    expect(escaped).toEqual([]);
  });

  it('rejects a first start that fails, and schedules nothing', async () => {
    const h = harness();
    h.plan.push(unreachable);
    await expect(h.restarter.start()).rejects.toThrow('broker unreachable');
    expect(jest.getTimerCount()).toBe(0);
  });
});
