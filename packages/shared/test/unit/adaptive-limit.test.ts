import {
  type GradientOptions,
  type GradientState,
  gradientLimit,
  initialGradient,
  nextGradient,
} from '../../src/admission/adaptive-limit';

const opts: GradientOptions = { initial: 8, min: 1, max: 32 };

/** Feeds `n` calls of `ms`, each finishing while `inFlight` calls run (default: the whole limit). */
function feed(state: GradientState, n: number, ms: number, inFlight?: number, o = opts): GradientState {
  let s = state;
  for (let i = 0; i < n; i++) s = nextGradient(s, o, ms, inFlight ?? gradientLimit(s, o));
  return s;
}

describe('gradient limit', () => {
  it('starts at its initial limit, within its bounds', () => {
    expect(gradientLimit(initialGradient(opts), opts)).toBe(8);
    expect(gradientLimit(initialGradient({ ...opts, initial: 100 }), opts)).toBe(32);
    expect(() => initialGradient({ initial: 4, min: 0, max: 8 })).toThrow(RangeError);
  });

  it('grows while calls take their long-term time', () => {
    const steady = feed(initialGradient(opts), 10, 20);
    expect(gradientLimit(steady, opts)).toBeGreaterThan(8);
    const longer = feed(steady, 10, 20);
    expect(longer.estimate).toBeGreaterThan(steady.estimate);
    expect(longer.longMs).toBeCloseTo(20);
  });

  it('grows while calls are slower than their long-term time, but within the tolerance', () => {
    const warm = feed(initialGradient(opts), 20, 20);
    const within = feed(warm, 5, 29);
    expect(within.estimate).toBeGreaterThan(warm.estimate);
  });

  it('shrinks when short-term calls are slower than the tolerance allows', () => {
    const warm = feed(initialGradient(opts), 20, 20);
    const before = gradientLimit(warm, opts);
    const slow = feed(warm, 20, 100);
    expect(gradientLimit(slow, opts)).toBeLessThan(before);
    expect(slow.estimate).toBeLessThan(warm.estimate);
  });

  it('stays within [min, max], and the limit in force is an integer', () => {
    const o = { initial: 8, min: 6, max: 12 };
    let s = initialGradient(o);
    const seen: number[] = [];
    for (let i = 0; i < 200; i++) {
      s = nextGradient(s, o, i % 40 < 20 ? 10 : 200, gradientLimit(s, o));
      seen.push(gradientLimit(s, o));
      expect(s.estimate).toBeGreaterThanOrEqual(6);
      expect(s.estimate).toBeLessThanOrEqual(12);
    }
    expect(seen.every(Number.isInteger)).toBe(true);
    expect(Math.max(...seen)).toBe(12);
    expect(Math.min(...seen)).toBe(6);
  });

  it('does not grow a limit that is not used', () => {
    const warm = feed(initialGradient(opts), 20, 20);
    const idle = feed(warm, 20, 20, 1);
    expect(idle.estimate).toBe(warm.estimate);
    expect(idle.samples).toBe(warm.samples + 20);
  });

  it('ignores a duration that is not a number of milliseconds', () => {
    const s = initialGradient(opts);
    expect(nextGradient(s, opts, Number.NaN, 8)).toBe(s);
    expect(nextGradient(s, opts, -1, 8)).toBe(s);
  });
});
