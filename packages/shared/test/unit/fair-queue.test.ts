import {
  FRESH_MS,
  type QueueView,
  admit,
  expectedWait,
  nextToStart,
  retryAfterSeconds,
} from '../../src/admission/fair-queue';

const view = (over: Partial<QueueView> = {}): QueueView => ({
  maxInFlight: 2,
  running: new Map(),
  waiting: [],
  meanServiceMs: 100,
  now: 10,
  maxWaitMs: 1000,
  ...over,
});
const waiting = (...subjects: string[]) => subjects.map((subject, i) => ({ id: i + 1, subject, since: i }));

describe('admission: who starts, waits or is refused', () => {
  it('refuses a call that may not wait when no slot is free, even before any call was measured', () => {
    const full = view({ running: new Map([['b', 2]]), meanServiceMs: 0 });
    expect(admit(full, 'a', 0)).toEqual({ kind: 'refuse', expectedWaitMs: 0 });
    expect(admit(full, 'a', 1000)).toEqual({ kind: 'wait', expectedWaitMs: 0 });
  });

  it('starts a call at once while a slot is free and nobody waits', () => {
    expect(admit(view(), 'a', 1000)).toEqual({ kind: 'start' });
    expect(admit(view({ running: new Map([['a', 1]]) }), 'b', 1000)).toEqual({ kind: 'start' });
  });

  it('queues a call whose expected wait is within the bound, and refuses one beyond it', () => {
    const full = view({ running: new Map([['a', 2]]), waiting: waiting('a', 'a') });
    // Two ahead, two slots: it starts after the second round of calls (2 x 100 ms).
    expect(expectedWait(full, 2)).toBe(200);
    expect(admit(full, 'a', 200)).toEqual({ kind: 'wait', expectedWaitMs: 200 });
    expect(admit(full, 'a', 199)).toEqual({ kind: 'refuse', expectedWaitMs: 200 });
  });

  it('refuses at once a call whose deadline leaves no time to wait', () => {
    const busy = view({ running: new Map([['a', 2]]) });
    expect(admit(busy, 'b', 0)).toEqual({ kind: 'refuse', expectedWaitMs: 100 });
  });

  it('gives a subject below its fair share the place of the newest call of the heaviest subject', () => {
    const full = view({ running: new Map([['heavy', 2]]), waiting: waiting('heavy', 'heavy', 'heavy') });
    const d = admit(full, 'light', 100);
    expect(d.kind).toBe('wait');
    expect(d.kind === 'wait' && d.evict).toEqual({ id: 3, subject: 'heavy', since: 2 });
  });

  it('never takes the place of a call that has waited longer than a fresh one: the newcomer is refused', () => {
    const full = view({ running: new Map([['heavy', 2]]), waiting: waiting('heavy', 'heavy', 'heavy') });
    // The newest heavy call joined at 2: at 2 + FRESH_MS it is still fresh, a millisecond later it is not.
    const fresh = admit({ ...full, now: 2 + FRESH_MS }, 'light', 100);
    expect(fresh.kind === 'wait' && fresh.evict?.id).toBe(3);
    expect(admit({ ...full, now: 3 + FRESH_MS }, 'light', 100)).toEqual({
      kind: 'refuse',
      expectedWaitMs: 200,
    });
  });

  it('refuses a subject already at or above its share, whoever else waits', () => {
    const full = view({
      running: new Map([
        ['a', 1],
        ['b', 1],
      ]),
      waiting: waiting('a', 'b', 'a', 'b'),
    });
    expect(admit(full, 'a', 100).kind).toBe('refuse');
  });

  it('starts next the oldest call of the subject with the fewest calls in the service', () => {
    const v = view({ maxInFlight: 3, running: new Map([['a', 2]]), waiting: waiting('a', 'a', 'b', 'b') });
    expect(nextToStart(v)?.subject).toBe('b');
    expect(nextToStart(v)?.id).toBe(3);
    // Nothing running: the subject with fewer waiting goes first, even if it came last.
    const idle = view({ waiting: waiting('a', 'a', 'a', 'b') });
    expect(nextToStart(idle)?.subject).toBe('b');
    expect(nextToStart(view({ running: new Map([['a', 2]]), waiting: waiting('b') }))).toBeUndefined();
  });

  it('starts the oldest call first once it has waited half the bound, whatever its subject holds', () => {
    const v = view({ maxInFlight: 3, running: new Map([['a', 2]]), waiting: waiting('a', 'b') });
    // The a call joined at 0: passed over for b until it has waited 500 of its 1000 ms.
    expect(nextToStart({ ...v, now: 499 })?.subject).toBe('b');
    expect(nextToStart({ ...v, now: 500 })?.id).toBe(1);
  });

  it('asks a refused caller to come back after the expected wait, in whole seconds, at least one', () => {
    expect(retryAfterSeconds(0)).toBe(1);
    expect(retryAfterSeconds(1000)).toBe(1);
    expect(retryAfterSeconds(1001)).toBe(2);
  });
});
