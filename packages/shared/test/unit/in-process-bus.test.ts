import { createBus, InProcessBus, type IncomingMessage } from '../../src';

/** Resolves when `cond` holds, polling the event loop (no wall-clock assertions). */
async function until(cond: () => boolean, what: string, maxMs = 5000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > maxMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('InProcessBus', () => {
  let bus: InProcessBus;
  beforeEach(() => {
    bus = new InProcessBus({ minBackoffMs: 5, maxBackoffMs: 20, maxBatch: 7 });
  });
  afterEach(async () => {
    await bus.close();
  });

  it('is what createBus returns in standalone mode, and check resolves', async () => {
    const b = createBus({ VISION_MODE: 'standalone', KAFKA_BROKERS: [] }, { clientId: 't' });
    expect(b).toBeInstanceOf(InProcessBus);
    expect(b.kind).toBe('memory');
    await expect(b.check()).resolves.toBeUndefined();
    await b.close();
    await expect(b.check()).rejects.toThrow();
    expect(() => createBus({ VISION_MODE: 'distributed', KAFKA_BROKERS: [] }, { clientId: 't' })).toThrow(
      /KAFKA_BROKERS/,
    );
  });

  it('keeps the order of each key across batches, with JSON copies of values', async () => {
    const seen = new Map<string, number[]>();
    let batches = 0;
    await bus.subscribe({
      topic: 't',
      group: 'g',
      handleBatch: async (msgs) => {
        batches++;
        for (const m of msgs) {
          const v = m.value as { key: string; i: number };
          expect(m.key).toBe(v.key);
          seen.set(m.key, [...(seen.get(m.key) ?? []), v.i]);
        }
        await new Promise((r) => setTimeout(r, 1));
      },
    });
    const value = { key: 'k0', i: -1, at: new Date(0) };
    for (let i = 0; i < 60; i++) {
      await bus.publish(
        't',
        [0, 1, 2].map((k) => ({ key: `k${k}`, value: { key: `k${k}`, i } })),
      );
    }
    await bus.publish('t', [{ key: 'k0', value }]);
    value.i = 999; // mutating after publish changes nothing
    await until(
      () => [0, 1, 2].every((k) => (seen.get(`k${k}`)?.length ?? 0) >= (k === 0 ? 61 : 60)),
      'all messages',
    );
    const expected = Array.from({ length: 60 }, (_, i) => i);
    expect(seen.get('k0')).toEqual([...expected, -1]);
    expect(seen.get('k1')).toEqual(expected);
    expect(seen.get('k2')).toEqual(expected);
    expect(batches).toBeGreaterThan(1);
  });

  it('delivers each message once per group and shares a group between subscribers', async () => {
    const byGroupA: string[] = [];
    const byGroupB: string[] = [];
    const members = new Map<string, number>();
    const sub = (group: string, sink: string[], name: string) =>
      bus.subscribe({
        topic: 'shared',
        group,
        fromBeginning: true,
        handleBatch: async (msgs) => {
          members.set(name, (members.get(name) ?? 0) + msgs.length);
          for (const m of msgs) sink.push(m.key);
        },
      });
    await sub('a', byGroupA, 'a1');
    await sub('a', byGroupA, 'a2');
    await sub('b', byGroupB, 'b1');
    const keys = Array.from({ length: 40 }, (_, i) => `task-${i}`);
    await bus.publish(
      'shared',
      keys.map((key) => ({ key, value: { key } })),
    );
    await until(() => byGroupA.length >= 40 && byGroupB.length >= 40, 'both groups');
    await new Promise((r) => setTimeout(r, 20));
    expect([...byGroupA].sort()).toEqual([...keys].sort());
    expect([...byGroupB].sort()).toEqual([...keys].sort());
    // Both members of group a did part of the work.
    expect(members.get('a1')).toBeGreaterThan(0);
    expect(members.get('a2')).toBeGreaterThan(0);
    expect((members.get('a1') ?? 0) + (members.get('a2') ?? 0)).toBe(40);
  });

  it('redelivers a rejected batch and commits only after success, without reordering', async () => {
    const attempts: string[][] = [];
    let failuresLeft = 2;
    await bus.subscribe({
      topic: 'r',
      group: 'g',
      handleBatch: async (msgs: IncomingMessage[]) => {
        attempts.push(msgs.map((m) => (m.value as { n: string }).n));
        if (msgs.some((m) => (m.value as { n: string }).n === 'b') && failuresLeft > 0) {
          failuresLeft--;
          throw new Error('transient');
        }
      },
    });
    await bus.publish('r', [
      { key: 'same', value: { n: 'a' } },
      { key: 'same', value: { n: 'b' } },
      { key: 'same', value: { n: 'c' } },
    ]);
    await until(
      () => failuresLeft === 0 && attempts.flat().filter((n) => n === 'c').length >= 3,
      'redelivery',
    );
    await new Promise((r) => setTimeout(r, 30));
    const delivered = attempts.flat();
    // Three attempts of the same batch, in order; nothing after the successful one.
    expect(attempts).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b', 'c'],
      ['a', 'b', 'c'],
    ]);
    expect(delivered.filter((n) => n === 'c')).toHaveLength(3);
  });

  it('starts a new group at the end unless fromBeginning, and resumes a known group where it stopped', async () => {
    await bus.publish('late', [{ key: 'k', value: { n: 1 } }]);
    const latest: number[] = [];
    const earliest: number[] = [];
    await bus.subscribe({
      topic: 'late',
      group: 'latest',
      handleBatch: async (m) => void latest.push(...m.map((x) => (x.value as { n: number }).n)),
    });
    await bus.subscribe({
      topic: 'late',
      group: 'earliest',
      fromBeginning: true,
      handleBatch: async (m) => void earliest.push(...m.map((x) => (x.value as { n: number }).n)),
    });
    await bus.publish('late', [{ key: 'k', value: { n: 2 } }]);
    await until(() => latest.length >= 1 && earliest.length >= 2, 'both');
    expect(latest).toEqual([2]);
    expect(earliest).toEqual([1, 2]);

    const resumed: number[] = [];
    const first = await bus.subscribe({ topic: 'resume', group: 'r', handleBatch: async () => undefined });
    await bus.publish('resume', [{ key: 'k', value: { n: 1 } }]);
    await until(() => true, 'tick');
    await new Promise((r) => setTimeout(r, 20));
    await first.close();
    await bus.publish('resume', [{ key: 'k', value: { n: 2 } }]);
    await bus.subscribe({
      topic: 'resume',
      group: 'r',
      fromBeginning: true,
      handleBatch: async (m) => void resumed.push(...m.map((x) => (x.value as { n: number }).n)),
    });
    await until(() => resumed.length >= 1, 'resume');
    await new Promise((r) => setTimeout(r, 20));
    expect(resumed).toEqual([2]);
  });

  it('bounds the queue: publish waits while a slow group is maxQueued behind, then proceeds', async () => {
    const small = new InProcessBus({ maxQueued: 5, maxBatch: 1 });
    try {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const handled: number[] = [];
      await small.subscribe({
        topic: 'q',
        group: 'slow',
        handleBatch: async (m) => {
          await gate;
          handled.push(...m.map((x) => (x.value as { n: number }).n));
        },
      });
      for (let n = 0; n < 5; n++) await small.publish('q', [{ key: 'k', value: { n } }]);
      let sixthDone = false;
      const sixth = small.publish('q', [{ key: 'k', value: { n: 5 } }]).then(() => (sixthDone = true));
      await new Promise((r) => setTimeout(r, 30));
      expect(sixthDone).toBe(false);
      release();
      await sixth;
      await until(() => handled.length === 6, 'drain');
      expect(handled).toEqual([0, 1, 2, 3, 4, 5]);
    } finally {
      await small.close();
    }
  });

  it('refuses values that are not JSON and publishing after close', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(bus.publish('t', [{ key: 'k', value: cyclic }])).rejects.toThrow();
    await bus.close();
    await expect(bus.publish('t', [{ key: 'k', value: {} }])).rejects.toThrow('closed');
  });
});
