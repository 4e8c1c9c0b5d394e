import { evaluatedOnly } from '../../src/domain/cursor';

const rows = (...seqs: number[]) => seqs.map((seq) => ({ seq }));

describe('evaluatedOnly', () => {
  it('serves every stored frame of a task without rules', () => {
    expect(evaluatedOnly(rows(3, 4, 5), undefined)).toEqual({ rows: rows(3, 4, 5), waiting: false });
  });

  it('stops at the last evaluated frame, and says that stored frames wait after it', () => {
    expect(evaluatedOnly(rows(3, 4, 5, 6), 4)).toEqual({ rows: rows(3, 4), waiting: true });
  });

  it('serves nothing while the first frame after the cursor is not evaluated', () => {
    expect(evaluatedOnly(rows(0, 1), -1)).toEqual({ rows: [], waiting: true });
    expect(evaluatedOnly(rows(8), 7)).toEqual({ rows: [], waiting: true });
  });

  it('serves every frame read when the evaluation is at or past the last of them', () => {
    expect(evaluatedOnly(rows(3, 4), 4)).toEqual({ rows: rows(3, 4), waiting: false });
    expect(evaluatedOnly(rows(3, 4), 9)).toEqual({ rows: rows(3, 4), waiting: false });
    expect(evaluatedOnly([], 2)).toEqual({ rows: [], waiting: false });
  });
});
