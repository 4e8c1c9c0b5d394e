import { dayOf, dayStart, isDay, nextResetAt, secondsUntilReset } from '../../src/domain/day';

describe('quota day (UTC+8)', () => {
  it.each([
    ['2026-03-09T15:59:59.999Z', '2026-03-09'],
    ['2026-03-09T16:00:00.000Z', '2026-03-10'],
    ['2026-03-09T00:00:00.000Z', '2026-03-09'],
    ['2026-03-08T16:00:00.000Z', '2026-03-09'],
    ['2025-12-31T16:00:00.000Z', '2026-01-01'],
    ['2025-12-31T15:59:59.000Z', '2025-12-31'],
    ['2024-02-28T16:30:00.000Z', '2024-02-29'],
  ])('dayOf(%s) = %s', (instant, day) => {
    expect(dayOf(new Date(instant))).toBe(day);
  });

  it.each([
    ['2026-03-09T15:59:59Z', '2026-03-09T16:00:00.000Z'],
    ['2026-03-09T16:00:00Z', '2026-03-10T16:00:00.000Z'],
    ['2026-03-09T16:00:01Z', '2026-03-10T16:00:00.000Z'],
    ['2026-03-09T03:00:00Z', '2026-03-09T16:00:00.000Z'],
    ['2025-12-31T20:00:00Z', '2026-01-01T16:00:00.000Z'],
  ])('nextResetAt(%s) = %s', (instant, reset) => {
    expect(nextResetAt(new Date(instant))).toBe(reset);
  });

  it('a day starts at 16:00Z of the UTC day before', () => {
    expect(dayStart('2026-03-10').toISOString()).toBe('2026-03-09T16:00:00.000Z');
    expect(dayOf(dayStart('2026-03-10'))).toBe('2026-03-10');
  });

  it('counts whole seconds until the reset, at least one', () => {
    expect(secondsUntilReset(new Date('2026-03-09T15:59:59Z'))).toBe(1);
    expect(secondsUntilReset(new Date('2026-03-09T15:59:59.500Z'))).toBe(1);
    expect(secondsUntilReset(new Date('2026-03-09T16:00:00Z'))).toBe(86_400);
    expect(secondsUntilReset(new Date('2026-03-09T15:00:00Z'))).toBe(3600);
  });

  it('recognises day strings', () => {
    expect(isDay('2026-03-09')).toBe(true);
    expect(isDay('2026-3-9')).toBe(false);
    expect(isDay('2026-13-45')).toBe(false);
  });
});
