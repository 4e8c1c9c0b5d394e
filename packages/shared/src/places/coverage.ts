import { polygonArea, type Box, type Point } from './geometry';

/**
 * The area of (union of boxes) ∩ polygon, exact up to floating-point rounding (no sampling, no grid).
 *
 * Sweep over x: between two consecutive box x edges (a slab) the union of the boxes is a fixed set of merged
 * y intervals. By Green's theorem, for a simple polygon and an interval [a, b],
 *   area(polygon ∩ ([xa, xb] × [a, b])) = |Σ_edges ∫ (clamp(y_e(x), a, b) - a) dx over the edge's x-range ∩ [xa, xb]|
 * with each edge integrated in its own direction (at any x the crossing edges alternate in direction, so the
 * clamped heights add up to the length of the polygon's cross-section inside [a, b]). The integrand is linear
 * between the points where the edge crosses y = a or y = b, so each piece is integrated exactly by the
 * trapezoid rule. The only error is IEEE double rounding, far below 1e-9 of the unit square for inputs in [0, 1].
 * Cost: O(slabs × intervals × edges overlapping the slab), no allocation per edge.
 */
/**
 * Whether a covered fraction reaches a coverage threshold: fraction >= threshold - 1e-9, so that rounding
 * cannot put an exact tie (half of a zone covered, threshold 0.5) below the threshold.
 */
export function reachesCoverage(fraction: number, threshold: number): boolean {
  return fraction >= threshold - 1e-9;
}

export class PolygonCover {
  private readonly xs0: Float64Array;
  private readonly ys0: Float64Array;
  private readonly xs1: Float64Array;
  private readonly ys1: Float64Array;
  private readonly lo: Float64Array;
  private readonly hi: Float64Array;
  private readonly slope: Float64Array;
  /** The edges crossing the slab last prepared (prepareSlab): their x range in it, y at its ends, direction. */
  private slabEdges = 0;
  private readonly su: Float64Array;
  private readonly sv: Float64Array;
  private readonly syu: Float64Array;
  private readonly syv: Float64Array;
  private readonly sForward: Uint8Array;
  /** coveredArea's clipped boxes and sweep state, reused from call to call (grown as needed). */
  private work = new SweepBuffers(0);
  readonly bounds: Box;
  /** The polygon's area. */
  readonly area: number;

  constructor(poly: readonly Point[]) {
    const n = poly.length;
    [
      this.xs0,
      this.ys0,
      this.xs1,
      this.ys1,
      this.lo,
      this.hi,
      this.slope,
      this.su,
      this.sv,
      this.syu,
      this.syv,
    ] = Array.from({ length: 11 }, () => new Float64Array(n));
    this.sForward = new Uint8Array(n);
    let x1 = Infinity;
    let y1 = Infinity;
    let x2 = -Infinity;
    let y2 = -Infinity;
    for (let i = 0; i < n; i++) {
      const [ax, ay] = poly[i];
      const [bx, by] = poly[(i + 1) % n];
      this.xs0[i] = ax;
      this.ys0[i] = ay;
      this.xs1[i] = bx;
      this.ys1[i] = by;
      this.lo[i] = Math.min(ax, bx);
      this.hi[i] = Math.max(ax, bx);
      this.slope[i] = (by - ay) / (bx - ax);
      x1 = Math.min(x1, ax);
      x2 = Math.max(x2, ax);
      y1 = Math.min(y1, ay);
      y2 = Math.max(y2, ay);
    }
    this.bounds = [x1, y1, x2, y2];
    this.area = polygonArea(poly);
  }

  /** Keeps, in edge order, each edge over the slab [xa, xb]: its x range there and its y at both ends. */
  private prepareSlab(xa: number, xb: number): void {
    let m = 0;
    for (let i = 0; i < this.xs0.length; i++) {
      if (this.hi[i] <= xa || this.lo[i] >= xb) continue;
      const x0 = this.xs0[i];
      const y0 = this.ys0[i];
      const x1 = this.xs1[i];
      const y1 = this.ys1[i];
      const u = Math.max(this.lo[i], xa);
      const v = Math.min(this.hi[i], xb);
      const slope = this.slope[i];
      this.su[m] = u;
      this.sv[m] = v;
      this.syu[m] = u === x0 ? y0 : u === x1 ? y1 : y0 + slope * (u - x0);
      this.syv[m] = v === x0 ? y0 : v === x1 ? y1 : y0 + slope * (v - x0);
      this.sForward[m++] = x1 > x0 ? 1 : 0;
    }
    this.slabEdges = m;
  }

  /** area(polygon ∩ [xa, xb] × [a, b]) of the slab [xa, xb] last prepared. */
  private slabArea(a: number, b: number): number {
    let acc = 0;
    for (let j = 0; j < this.slabEdges; j++) {
      // An edge at or above a over the whole slab adds exactly 0 (only the sign of a zero, which abs drops).
      if (this.syu[j] <= a && this.syv[j] <= a) continue;
      const part = clampedIntegral(this.su[j], this.sv[j], this.syu[j], this.syv[j], a, b);
      acc += this.sForward[j] === 1 ? part : -part;
    }
    return Math.abs(acc);
  }

  /** area(polygon ∩ [xa, xb] × [a, b]). */
  rectArea(xa: number, xb: number, a: number, b: number): number {
    this.prepareSlab(xa, xb);
    return this.slabArea(a, b);
  }

  /** Whether the box overlaps the polygon with positive area. */
  overlaps(box: Box): boolean {
    const bd = this.bounds;
    if (box[2] <= bd[0] || box[0] >= bd[2] || box[3] <= bd[1] || box[1] >= bd[3]) return false;
    return this.rectArea(box[0], box[2], box[1], box[3]) > 0;
  }

  /**
   * area(union of boxes ∩ polygon): the boxes clipped to the polygon's bounds enter the sweep in x1 order (ties
   * in their order); the active ones are kept in (y1, y2) order, so merging is one pass.
   */
  coveredArea(boxes: readonly Box[]): number {
    const [bx1, by1, bx2, by2] = this.bounds;
    if (this.work.x1.length < boxes.length) this.work = new SweepBuffers(boxes.length);
    const { x1: kx1, y1: ky1, x2: kx2, y2: ky2, order, active, xs } = this.work;
    let n = 0;
    for (const bb of boxes) {
      const x1 = Math.max(bb[0], bx1);
      const y1 = Math.max(bb[1], by1);
      const x2 = Math.min(bb[2], bx2);
      const y2 = Math.min(bb[3], by2);
      if (!(x2 > x1 && y2 > y1)) continue;
      kx1[n] = x1;
      ky1[n] = y1;
      kx2[n] = x2;
      ky2[n] = y2;
      // A stable insertion by x1.
      let at = n;
      while (at > 0 && kx1[order[at - 1]] > x1) {
        order[at] = order[at - 1];
        at--;
      }
      order[at] = n;
      n++;
    }
    if (n === 0) return 0;
    // Every x1 and x2 in ascending order (-0 before 0, as a typed array sorts): inserted box by box in x1 order,
    // they arrive nearly sorted.
    let m = 0;
    for (let i = 0; i < n; i++) {
      m = insertSorted(xs, m, kx1[order[i]]);
      m = insertSorted(xs, m, kx2[order[i]]);
    }
    const edges = xs.subarray(0, m);
    let live = 0;
    let next = 0;
    let area = 0;
    for (let k = 0; k + 1 < edges.length; k++) {
      const xa = edges[k];
      const xb = edges[k + 1];
      if (xb === xa) continue;
      let kept = 0;
      for (let j = 0; j < live; j++) if (kx2[active[j]] > xa) active[kept++] = active[j];
      live = kept;
      while (next < n && kx1[order[next]] <= xa) {
        const r = order[next++];
        let at = live;
        while (
          at > 0 &&
          (ky1[active[at - 1]] > ky1[r] || (ky1[active[at - 1]] === ky1[r] && ky2[active[at - 1]] > ky2[r]))
        ) {
          active[at] = active[at - 1];
          at--;
        }
        active[at] = r;
        live++;
      }
      if (live === 0) continue;
      this.prepareSlab(xa, xb);
      let a = ky1[active[0]];
      let b = ky2[active[0]];
      for (let j = 1; j < live; j++) {
        const y1 = ky1[active[j]];
        const y2 = ky2[active[j]];
        if (y1 <= b) {
          if (y2 > b) b = y2;
          continue;
        }
        area += this.slabArea(a, b);
        a = y1;
        b = y2;
      }
      area += this.slabArea(a, b);
    }
    return area;
  }
}

/** coveredArea's working arrays for up to `capacity` boxes. */
class SweepBuffers {
  readonly x1: Float64Array;
  readonly y1: Float64Array;
  readonly x2: Float64Array;
  readonly y2: Float64Array;
  /** Box indices in x1 order, and the active ones in (y1, y2) order. */
  readonly order: Int32Array;
  readonly active: Int32Array;
  /** Every box's x1 and x2. */
  readonly xs: Float64Array;

  constructor(capacity: number) {
    const size = Math.max(16, capacity);
    [this.x1, this.y1, this.x2, this.y2] = Array.from({ length: 4 }, () => new Float64Array(size));
    this.order = new Int32Array(size);
    this.active = new Int32Array(size);
    this.xs = new Float64Array(2 * size);
  }
}

/** Inserts v into the ascending xs[0, m) (-0 before 0); returns m + 1. */
function insertSorted(xs: Float64Array, m: number, v: number): number {
  let at = m;
  while (at > 0 && (xs[at - 1] > v || (xs[at - 1] === 0 && v === 0 && 1 / xs[at - 1] > 1 / v))) {
    xs[at] = xs[at - 1];
    at--;
  }
  xs[at] = v;
  return m + 1;
}

/** clamp(y, a, b) - a. */
function lift(y: number, a: number, b: number): number {
  return y <= a ? 0 : y >= b ? b - a : y - a;
}

/** ∫ over [u, v] of clamp(y, a, b) - a, y going linearly from yu at u to yv at v (no allocation). */
function clampedIntegral(u: number, v: number, yu: number, yv: number, a: number, b: number): number {
  const w = v - u;
  if (w <= 0) return 0;
  const gu = lift(yu, a, b);
  const gv = lift(yv, a, b);
  const crossesA = (yu - a) * (yv - a) < 0;
  const crossesB = (yu - b) * (yv - b) < 0;
  if (!crossesA && !crossesB) return ((gu + gv) / 2) * w;
  // The integrand is linear between u, the points where y crosses a (lift 0) and b (lift b - a), and v.
  const xa = crossesA ? u + ((a - yu) / (yv - yu)) * w : NaN;
  const xb = crossesB ? u + ((b - yu) / (yv - yu)) * w : NaN;
  const top = b - a;
  if (!crossesB) return (gu / 2) * (xa - u) + (gv / 2) * (v - xa);
  if (!crossesA) return ((gu + top) / 2) * (xb - u) + ((top + gv) / 2) * (v - xb);
  // Both: y goes from below a to above b or back; the piece between is a ramp from 0 to top.
  const first = Math.min(xa, xb);
  const second = Math.max(xa, xb);
  const gFirst = first === xa ? 0 : top;
  const gSecond = second === xa ? 0 : top;
  return (
    ((gu + gFirst) / 2) * (first - u) +
    ((gFirst + gSecond) / 2) * (second - first) +
    ((gSecond + gv) / 2) * (v - second)
  );
}
