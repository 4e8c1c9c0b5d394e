import { retryAfterMs } from '../../src/contract/retry-after';

const NOW = Date.parse('2026-11-26T07:00:00Z');

describe('retryAfterMs', () => {
  it('reads delta-seconds', () => {
    expect(retryAfterMs('7', NOW)).toBe(7000);
    expect(retryAfterMs(' 0 ', NOW)).toBe(0);
    expect(retryAfterMs(['3', '9'], NOW)).toBe(3000);
  });

  it('reads an HTTP date as the time left until it, 0 when past', () => {
    expect(retryAfterMs('Thu, 26 Nov 2026 07:00:30 GMT', NOW)).toBe(30_000);
    expect(retryAfterMs('Thu, 26 Nov 2026 06:59:00 GMT', NOW)).toBe(0);
  });

  it.each([undefined, null, '', '   ', '-5', '1.5', '+3', 'soon', '12345678901'])(
    'is undefined for %p',
    (value) => {
      expect(retryAfterMs(value, NOW)).toBeUndefined();
    },
  );
});
