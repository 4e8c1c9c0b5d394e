import { assign } from '../../src/tracking/assignment';

describe('tracking assignment', () => {
  it('finds the optimal assignment where a greedy choice of the cheapest pair is worse', () => {
    // Greedy would take (0, 0) at 0.1 and leave row 1 to column 1 at 0.9 (total 1.0); optimal is 0.2 + 0.2.
    const a = assign(
      [
        [0.1, 0.2],
        [0.2, 0.9],
      ],
      2,
      1,
    );
    expect(a.pairs).toEqual([
      [0, 1],
      [1, 0],
    ]);
    expect(a.unmatchedRows).toEqual([]);
    expect(a.unmatchedCols).toEqual([]);
  });

  it('never makes a pair at or over the limit and leaves rows and columns unmatched', () => {
    const a = assign(
      [
        [0.9, 0.3],
        [0.8, 0.95],
        [0.5, 0.5],
      ],
      2,
      0.6,
    );
    expect(a.pairs).toEqual([
      [0, 1],
      [2, 0],
    ]);
    expect(a.unmatchedRows).toEqual([1]);
    expect(a.unmatchedCols).toEqual([]);
  });

  it('prefers leaving a pair unmade to a pair costing more than the limit (lapjv extend_cost semantics)', () => {
    // Two pairs at 0.55 (1.1) against one at 0.05 and two unmatched (0.05 + 0.6): the second is cheaper.
    const a = assign(
      [
        [0.05, 0.55],
        [0.55, 0.7],
      ],
      2,
      0.6,
    );
    expect(a.pairs).toEqual([[0, 0]]);
    expect(a.unmatchedRows).toEqual([1]);
    expect(a.unmatchedCols).toEqual([1]);
  });

  it('handles empty and rectangular matrices and ignores non-finite costs', () => {
    expect(assign([], 3, 1)).toEqual({ pairs: [], unmatchedRows: [], unmatchedCols: [0, 1, 2] });
    expect(assign([[], []], 0, 1)).toEqual({ pairs: [], unmatchedRows: [0, 1], unmatchedCols: [] });
    const a = assign([[Number.NaN, 0.2, Number.POSITIVE_INFINITY]], 3, 1);
    expect(a.pairs).toEqual([[0, 1]]);
    expect(a.unmatchedCols).toEqual([0, 2]);
  });

  it('solves many separate groups as a whole would', () => {
    // Ten far-apart 2 x 2 blocks, each with the crossed assignment optimal.
    const n = 20;
    const cost = Array.from({ length: n }, (_, r) =>
      Array.from({ length: n }, (_, c) => {
        if (Math.floor(r / 2) !== Math.floor(c / 2)) return 1;
        return r % 2 === c % 2 ? (r % 2 ? 0.9 : 0.1) : 0.2;
      }),
    );
    const a = assign(cost, n, 0.95);
    expect(a.pairs).toEqual(Array.from({ length: n }, (_, r) => [r, r % 2 ? r - 1 : r + 1]));
  });
});
