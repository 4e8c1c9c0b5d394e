import { munkres } from 'munkres';

/**
 * Optimal one-to-one assignment of rows (tracks) to columns (detections) with a cost limit, as the
 * `lap.lapjv(cost, extend_cost=True, cost_limit=L)` call of ByteTrack and OC-SORT: a pair whose cost is
 * at least `limit` is never made, and a row or a column may stay unassigned at a cost of `limit / 2`
 * each, so the total cost of the pairs made plus `limit` per pair not made is the least possible.
 *
 * The matrix is split into the connected components of its admissible pairs (cost < limit) first: each
 * is solved on its own (Hungarian algorithm, the `munkres` package) on the component's rows and columns
 * padded with the unassigned choices. A frame of scattered objects is then many tiny problems.
 * Deterministic: the same matrix gives the same pairs, in row order.
 */
export interface Assignment {
  /** [row, column] pairs, sorted by row. */
  pairs: [number, number][];
  unmatchedRows: number[];
  unmatchedCols: number[];
}

export function assign(cost: readonly (readonly number[])[], cols: number, limit: number): Assignment {
  const rows = cost.length;
  const ok = (r: number, c: number) => {
    const v = cost[r][c];
    return Number.isFinite(v) && v < limit;
  };
  // Connected components over rows and columns (rows are 0..rows-1, columns rows..rows+cols-1).
  const parent = Array.from({ length: rows + cols }, (_, i) => i);
  const find = (i: number): number => {
    let root = i;
    while (parent[root] !== root) root = parent[root];
    while (parent[i] !== root) [parent[i], i] = [root, parent[i]];
    return root;
  };
  let admissible = 0;
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++)
      if (ok(r, c)) {
        parent[find(r)] = find(rows + c);
        admissible++;
      }
  if (admissible === 0) return { pairs: [], unmatchedRows: range(rows), unmatchedCols: range(cols) };

  const groups = new Map<number, { rows: number[]; cols: number[] }>();
  const group = (i: number) => {
    const root = find(i);
    let g = groups.get(root);
    if (!g) groups.set(root, (g = { rows: [], cols: [] }));
    return g;
  };
  for (let r = 0; r < rows; r++) group(r).rows.push(r);
  for (let c = 0; c < cols; c++) group(rows + c).cols.push(c);

  const pairs: [number, number][] = [];
  for (const g of groups.values()) {
    if (g.rows.length === 0 || g.cols.length === 0) continue;
    if (g.rows.length === 1 && g.cols.length === 1) {
      pairs.push([g.rows[0], g.cols[0]]); // a lone admissible pair
      continue;
    }
    for (const p of solveComponent(cost, g.rows, g.cols, limit, ok)) pairs.push(p);
  }
  pairs.sort((a, b) => a[0] - b[0]);
  const rowTaken = new Uint8Array(rows);
  const colTaken = new Uint8Array(cols);
  for (const [r, c] of pairs) {
    rowTaken[r] = 1;
    colTaken[c] = 1;
  }
  const unmatchedRows: number[] = [];
  const unmatchedCols: number[] = [];
  for (let r = 0; r < rows; r++) if (!rowTaken[r]) unmatchedRows.push(r);
  for (let c = 0; c < cols; c++) if (!colTaken[c]) unmatchedCols.push(c);
  return { pairs, unmatchedRows, unmatchedCols };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/**
 * One component, padded to a square of n + m: [[C, L/2], [L/2, 0]], as lapjv's extend_cost; an
 * inadmissible pair costs more than leaving both its row and its column unassigned.
 */
function solveComponent(
  cost: readonly (readonly number[])[],
  rows: readonly number[],
  cols: readonly number[],
  limit: number,
  ok: (r: number, c: number) => boolean,
): [number, number][] {
  const n = rows.length;
  const m = cols.length;
  const size = n + m;
  const half = limit / 2;
  const never = limit * 2 + 1;
  const mat: number[][] = [];
  for (let i = 0; i < size; i++) {
    const row = new Array<number>(size).fill(0);
    for (let j = 0; j < size; j++) {
      if (i < n && j < m) row[j] = ok(rows[i], cols[j]) ? cost[rows[i]][cols[j]] : never;
      else if (i < n || j < m) row[j] = half;
    }
    mat.push(row);
  }
  const out: [number, number][] = [];
  for (const [i, j] of munkres(mat)) {
    if (i < n && j < m && ok(rows[i], cols[j])) out.push([rows[i], cols[j]]);
  }
  return out;
}
