import { ApiError } from '@vision/shared';
import { DEFAULT_LIMIT, parseReadQuery } from '../../src/domain/read-query';

function reasonOf(query: Record<string, unknown>): string | undefined {
  try {
    parseReadQuery(query);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('OP-TASK-REQUEST-INVALID');
    return (err as ApiError).details?.reason as string;
  }
  return undefined;
}

describe('parseReadQuery', () => {
  it('defaults the limit and leaves min_score and cursor unset', () => {
    expect(parseReadQuery({})).toEqual({ limit: DEFAULT_LIMIT });
    expect(DEFAULT_LIMIT).toBe(100);
    expect(parseReadQuery({}, 50)).toEqual({ limit: 50 });
    expect(parseReadQuery({ cursor: '' })).toEqual({ limit: DEFAULT_LIMIT });
  });

  it('accepts limits 1..500 and min_score 0..1', () => {
    expect(parseReadQuery({ limit: '1', min_score: '0', cursor: 'c' })).toEqual({
      limit: 1,
      minScore: 0,
      cursor: 'c',
    });
    expect(parseReadQuery({ limit: '500', min_score: '1' })).toEqual({ limit: 500, minScore: 1 });
    expect(parseReadQuery({ min_score: '0.35' }).minScore).toBe(0.35);
    expect(parseReadQuery({ min_score: '.5' }).minScore).toBe(0.5);
    expect(parseReadQuery({ min_score: '1.0' }).minScore).toBe(1);
  });

  it.each(['0', '501', '-1', '1.5', 'abc', '', ' 5', '1e2', '0x10'])('rejects limit=%j', (v) => {
    expect(reasonOf({ limit: v })).toBe('invalid_limit');
  });

  it.each([
    ['1e-1', 0.1],
    ['2.2250738585072014e-308', 2.2250738585072014e-308],
    ['-0.0', -0],
    ['5E-1', 0.5],
  ])('accepts min_score=%j in JSON number notation', (v, n) => {
    expect(parseReadQuery({ min_score: v }).minScore).toBe(n);
  });

  it.each(['-0.1', '1.01', '2', 'abc', '', 'NaN', 'Infinity', '0x1', '1e400', '2e-1e1', ' 0.5', '+0.5'])(
    'rejects min_score=%j',
    (v) => {
      expect(reasonOf({ min_score: v })).toBe('invalid_min_score');
    },
  );

  it('rejects unknown and repeated parameters', () => {
    expect(reasonOf({ page: '2' })).toBe('unknown_field');
    expect(reasonOf({ limit: ['1', '2'] })).toBe('invalid_limit');
    expect(reasonOf({ cursor: ['a', 'b'] })).toBe('invalid_cursor');
  });
});
