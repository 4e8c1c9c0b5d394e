import { createLimiter, rateWindows, type Limiter } from '../src';

describe('memory Limiter (standalone)', () => {
  let limiter: Limiter;
  beforeEach(() => {
    jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00.000Z') });
    limiter = createLimiter({ VISION_MODE: 'standalone', REDIS_URL: undefined }, { keyPrefix: 'test' });
  });
  afterEach(async () => {
    await limiter.close();
    jest.useRealTimers();
  });

  it('is in memory mode and ready', async () => {
    expect(limiter.mode()).toBe('memory');
    expect(await limiter.check()).toBeUndefined();
  });

  it('allows perSecond + burst at once, then denies with a retry delay', async () => {
    const opts = { perSecond: 3, burst: 2 };
    const decisions = [];
    for (let i = 0; i < 6; i++) decisions.push(await limiter.consumeRate('subject-a', opts));
    expect(decisions.slice(0, 5).every((d) => d.allowed)).toBe(true);
    const denied = decisions[5];
    expect(denied.allowed).toBe(false);
    expect(denied.remaining).toBe(0);
    expect(denied.retryAfterMs).toBeGreaterThan(0);
    expect(denied.retryAfterMs).toBeLessThanOrEqual(1000);
    // Other keys are independent.
    expect((await limiter.consumeRate('subject-b', opts)).allowed).toBe(true);
  });

  it('recovers the sustained rate after the window, the burst only later', async () => {
    const opts = { perSecond: 2, burst: 4 };
    for (let i = 0; i < 6; i++) expect((await limiter.consumeRate('k', opts)).allowed).toBe(true);
    const denied = await limiter.consumeRate('k', opts);
    expect(denied.allowed).toBe(false);
    jest.advanceTimersByTime(denied.retryAfterMs);
    // The sustained 2/s is back, the burst (4 points per 2 s) not yet.
    expect((await limiter.consumeRate('k', opts)).allowed).toBe(true);
    expect((await limiter.consumeRate('k', opts)).allowed).toBe(true);
    expect((await limiter.consumeRate('k', opts)).allowed).toBe(false);
    jest.advanceTimersByTime(2000);
    for (let i = 0; i < 6; i++) expect((await limiter.consumeRate('k', opts)).allowed).toBe(true);
  });

  it('keeps separate limits per (perSecond, burst) for the same key', async () => {
    expect((await limiter.consumeRate('k', { perSecond: 1, burst: 0 })).allowed).toBe(true);
    expect((await limiter.consumeRate('k', { perSecond: 1, burst: 0 })).allowed).toBe(false);
    expect((await limiter.consumeRate('k', { perSecond: 5, burst: 0 })).allowed).toBe(true);
  });

  it('maps limits to windows as documented and refuses nonsense', () => {
    expect(rateWindows({ perSecond: 10, burst: 20 })).toEqual({
      sustained: { points: 10, duration: 1 },
      burst: { points: 20, duration: 2 },
    });
    expect(rateWindows({ perSecond: 0.5, burst: 0 })).toEqual({ sustained: { points: 1, duration: 2 } });
    expect(() => rateWindows({ perSecond: 0, burst: 1 })).toThrow(RangeError);
    expect(() => rateWindows({ perSecond: 1, burst: -1 })).toThrow(RangeError);
  });

  it('hands out at most `limit` slots, and a released slot is free again', async () => {
    const a = await limiter.acquireSlot('subject', 2);
    const b = await limiter.acquireSlot('subject', 2);
    expect(a).toBeDefined();
    expect(b).toBeDefined();
    expect(await limiter.acquireSlot('subject', 2)).toBeUndefined();
    expect(await limiter.acquireSlot('other', 2)).toBeDefined();
    await a?.();
    await a?.(); // releasing twice frees only one slot
    const c = await limiter.acquireSlot('subject', 2);
    expect(c).toBeDefined();
    expect(await limiter.acquireSlot('subject', 2)).toBeUndefined();
  });

  it('expires slots of holders that never release after the lease', async () => {
    expect(await limiter.acquireSlot('s', 1, 5000)).toBeDefined();
    jest.advanceTimersByTime(4000);
    expect(await limiter.acquireSlot('s', 1, 5000)).toBeUndefined();
    jest.advanceTimersByTime(1001);
    const again = await limiter.acquireSlot('s', 1, 5000);
    expect(again).toBeDefined();
    expect(await limiter.acquireSlot('s', 1, 5000)).toBeUndefined();
  });

  it('with a limit of 0 never grants a slot', async () => {
    expect(await limiter.acquireSlot('z', 0)).toBeUndefined();
  });
});

describe('createLimiter in distributed mode', () => {
  it('names REDIS_URL when it is missing', () => {
    expect(() =>
      createLimiter({ VISION_MODE: 'distributed', REDIS_URL: undefined }, { keyPrefix: 'x' }),
    ).toThrow(/REDIS_URL/);
  });
});

describe('Redis limiter while Redis is unreachable', () => {
  it('reports memory-fallback and degraded, and still limits in memory', async () => {
    // Nothing listens on port 1: the client never becomes ready.
    const limiter = createLimiter(
      { VISION_MODE: 'distributed', REDIS_URL: 'redis://:secret@127.0.0.1:1' },
      { keyPrefix: 'x' },
    );
    try {
      expect(limiter.mode()).toBe('memory-fallback');
      expect(await limiter.check()).toEqual({ degraded: expect.stringContaining('Redis') });
      const opts = { perSecond: 2, burst: 1 };
      const allowed = [];
      for (let i = 0; i < 4; i++) allowed.push((await limiter.consumeRate('subject', opts)).allowed);
      expect(allowed).toEqual([true, true, true, false]);
      const slot = await limiter.acquireSlot('subject', 1);
      expect(slot).toBeDefined();
      expect(await limiter.acquireSlot('subject', 1)).toBeUndefined();
      await slot?.();
      expect(await limiter.acquireSlot('subject', 1)).toBeDefined();
    } finally {
      await limiter.close();
    }
  });
});
