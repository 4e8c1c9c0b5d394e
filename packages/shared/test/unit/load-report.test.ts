import { formatLoadReport, parseLoadReport } from '../../src/admission/load-report';

describe('load report', () => {
  const report = { replica: '3f9a1c20', limit: 4, maxWaitMs: 1000, running: 2, waiting: 0 };

  it('reads what it writes', () => {
    expect(formatLoadReport(report)).toBe(
      'replica=3f9a1c20; limit=4; max_wait_ms=1000; running=2; waiting=0',
    );
    expect(parseLoadReport(formatLoadReport(report))).toEqual(report);
  });

  it.each([
    ['missing', undefined],
    ['repeated', ['replica=a; limit=1; max_wait_ms=0; running=0; waiting=0', 'replica=b']],
    ['no limit', 'replica=a; max_wait_ms=0; running=0; waiting=0'],
    ['a limit of 0', 'replica=a; limit=0; max_wait_ms=0; running=0; waiting=0'],
    ['a negative wait', 'replica=a; limit=1; max_wait_ms=-1; running=0; waiting=0'],
    ['a fraction', 'replica=a; limit=1.5; max_wait_ms=0; running=0; waiting=0'],
    ['junk', 'replica=a; limit=1; max_wait_ms=0; running=0; waiting=0; x'],
    ['too long', `replica=${'a'.repeat(300)}`],
  ])('is nothing for a header %s', (_what, value) => {
    expect(parseLoadReport(value)).toBeUndefined();
  });
});
