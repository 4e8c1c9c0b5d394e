import { decideSpend, leaseGrant, usableUntil } from '../../src/domain/lease';

const at = (s: string) => new Date(s);

describe('quota lease arithmetic', () => {
  it('grants at least min, at most max, and never more than half of what is left free after min', () => {
    expect(leaseGrant({ limit: 100, used: 0, held: 0 }, 2, 20)).toBe(20);
    expect(leaseGrant({ limit: 10, used: 0, held: 0 }, 1, 32)).toBe(1 + 4);
    expect(leaseGrant({ limit: 10, used: 6, held: 2 }, 2, 32)).toBe(2);
    expect(leaseGrant({ limit: 10, used: 6, held: 2 }, 3, 32)).toBeUndefined();
    expect(leaseGrant({ limit: 10, used: 12, held: 0 }, 1, 1)).toBeUndefined();
    // Three holders asking in turn for a small day take it all, never more.
    let held = 0;
    for (let i = 0; i < 3; i++) held += leaseGrant({ limit: 10, used: 0, held }, 1, 32) ?? 0;
    expect(held).toBeLessThanOrEqual(10);
  });

  it('a lease is usable for its window, never past the end of its UTC+8 day', () => {
    expect(usableUntil(at('2026-03-09T04:00:00Z'), 10_000)).toEqual(at('2026-03-09T04:00:10Z'));
    expect(usableUntil(at('2026-03-09T15:59:55Z'), 10_000)).toEqual(at('2026-03-09T16:00:00Z'));
  });

  it('spends from a live lease with room, else only if the day has room', () => {
    const live = {
      units: 5,
      spent: 3,
      status: 'held' as const,
      expiresAt: at('2026-03-09T04:01:00Z'),
      settledUnits: null,
    };
    const now = at('2026-03-09T04:00:30Z');
    expect(decideSpend(live, 2, now).action).toBe('from_lease');
    expect(decideSpend(live, 3, now).action).toBe('if_fits');
    expect(decideSpend(live, 1, at('2026-03-09T04:01:00Z')).action).toBe('if_fits');
    expect(decideSpend({ ...live, status: 'settled' }, 1, now).action).toBe('if_fits');
  });
});
