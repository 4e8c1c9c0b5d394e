import { decideSettle, fits, holdIsActive, remaining } from '../../src/domain/ledger';
import { limitFor, overridesSchema } from '../../src/domain/limits';
import { quotaEvent } from '../../src/domain/events';

const at = (s: string) => new Date(s);

describe('quota arithmetic', () => {
  it('remaining is the limit less used and held, never negative', () => {
    expect(remaining({ limit: 5, used: 2, held: 1 })).toBe(2);
    expect(remaining({ limit: 5, used: 5, held: 0 })).toBe(0);
    expect(remaining({ limit: 3, used: 5, held: 1 })).toBe(0);
  });

  it('fits exactly up to the limit and not beyond', () => {
    expect(fits({ limit: 5, used: 4, held: 0 }, 1)).toBe(true);
    expect(fits({ limit: 5, used: 4, held: 0 }, 2)).toBe(false);
    expect(fits({ limit: 100, used: 40, held: 50 }, 10)).toBe(true);
    expect(fits({ limit: 100, used: 40, held: 50 }, 11)).toBe(false);
    expect(fits({ limit: 0, used: 0, held: 0 }, 1)).toBe(false);
    expect(fits({ limit: 0, used: 0, held: 0 }, 0)).toBe(true);
  });

  it('a hold is active while held and before its expiry', () => {
    const h = { status: 'held' as const, expiresAt: at('2026-01-01T00:10:00Z') };
    expect(holdIsActive(h, at('2026-01-01T00:09:59.999Z'))).toBe(true);
    expect(holdIsActive(h, at('2026-01-01T00:10:00Z'))).toBe(false);
    expect(holdIsActive({ ...h, status: 'settled' }, at('2026-01-01T00:00:00Z'))).toBe(false);
    expect(holdIsActive({ ...h, status: 'expired' }, at('2026-01-01T00:00:00Z'))).toBe(false);
  });

  describe('decideSettle', () => {
    const hold = {
      units: 10,
      status: 'held' as const,
      expiresAt: at('2026-01-01T00:10:00Z'),
      settledUnits: null,
    };
    const before = at('2026-01-01T00:05:00Z');
    const after = at('2026-01-01T00:11:00Z');
    it.each([
      ['live hold', hold, 7, before, { action: 'settle_live' }],
      ['live hold, all units', hold, 10, before, { action: 'settle_live' }],
      ['live hold, zero units', hold, 0, before, { action: 'settle_live' }],
      ['more than held', hold, 11, before, { action: 'too_many', held: 10 }],
      ['lapsed hold', hold, 7, after, { action: 'settle_lapsed' }],
      ['swept hold', { ...hold, status: 'expired' as const }, 7, before, { action: 'settle_lapsed' }],
      [
        'settled, same units',
        { ...hold, status: 'settled' as const, settledUnits: 7 },
        7,
        after,
        { action: 'replay' },
      ],
      [
        'settled, other units',
        { ...hold, status: 'settled' as const, settledUnits: 7 },
        6,
        before,
        { action: 'conflict', settledUnits: 7 },
      ],
    ])('%s', (_name, h, units, now, expected) => {
      expect(decideSettle(h, units, now)).toEqual(expected);
    });
  });
});

describe('limits', () => {
  const limits = { video: 5, image: 100, overrides: { acme: { video: 10 }, big: { video: 1, image: 500 } } };
  it('uses the override of the subject and kind, else the default', () => {
    expect(limitFor(limits, 'acme', 'video')).toBe(10);
    expect(limitFor(limits, 'acme', 'image')).toBe(100);
    expect(limitFor(limits, 'big', 'image')).toBe(500);
    expect(limitFor(limits, 'other', 'video')).toBe(5);
    expect(limitFor(limits, 'constructor', 'video')).toBe(5);
  });
  it('validates override objects', () => {
    expect(overridesSchema.safeParse({ acme: { video: 10, image: 500 } }).success).toBe(true);
    expect(overridesSchema.safeParse({ acme: { videos: 10 } }).success).toBe(false);
    expect(overridesSchema.safeParse({ acme: { video: -1 } }).success).toBe(false);
    expect(overridesSchema.safeParse({ acme: { video: 1.5 } }).success).toBe(false);
    expect(overridesSchema.safeParse([1]).success).toBe(false);
  });
});

describe('quota events', () => {
  it('has the shape of docs/INTERNAL.md', () => {
    expect(quotaEvent('e1', 'charged', 's', 'video', 1, '2026-01-01', at('2026-01-01T01:00:00Z'))).toEqual({
      schema: 1,
      event_id: 'e1',
      type: 'charged',
      subject: 's',
      kind: 'video',
      units: 1,
      day: '2026-01-01',
      occurred_at: '2026-01-01T01:00:00.000Z',
    });
  });
});
