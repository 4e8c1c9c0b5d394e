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
  readonly bounds: Box;
  /** The polygon's area. */
  readonly area: number;

  constructor(poly: readonly Point[]) {
    const n = poly.length;
    this.xs0 = new Float64Array(n);
    this.ys0 = new Float64Array(n);
    this.xs1 = new Float64Array(n);
    this.ys1 = new Float64Array(n);
    this.lo = new Float64Array(n);
    this.hi = new Float64Array(n);
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
      x1 = Math.min(x1, ax);
      x2 = Math.max(x2, ax);
      y1 = Math.min(y1, ay);
      y2 = Math.max(y2, ay);
    }
    this.bounds = [x1, y1, x2, y2];
    this.area = polygonArea(poly);
  }

  /** area(polygon ∩ [xa, xb] × [a, b]). */
  rectArea(xa: number, xb: number, a: number, b: number): number {
    let acc = 0;
    for (let i = 0; i < this.xs0.length; i++) {
      if (this.hi[i] <= xa || this.lo[i] >= xb) continue;
      const x0 = this.xs0[i];
      const y0 = this.ys0[i];
      const x1 = this.xs1[i];
      const y1 = this.ys1[i];
      const u = Math.max(this.lo[i], xa);
      const v = Math.min(this.hi[i], xb);
      const slope = (y1 - y0) / (x1 - x0);
      const yu = u === x0 ? y0 : u === x1 ? y1 : y0 + slope * (u - x0);
      const yv = v === x0 ? y0 : v === x1 ? y1 : y0 + slope * (v - x0);
      const part = clampedIntegral(u, v, yu, yv, a, b);
      acc += x1 > x0 ? part : -part;
    }
    return Math.abs(acc);
  }

  /** Whether the box overlaps the polygon with positive area. */
  overlaps(box: Box): boolean {
    const bd = this.bounds;
    if (box[2] <= bd[0] || box[0] >= bd[2] || box[3] <= bd[1] || box[1] >= bd[3]) return false;
    return this.rectArea(box[0], box[2], box[1], box[3]) > 0;
  }

  /** area(union of boxes ∩ polygon). */
  coveredArea(boxes: readonly Box[]): number {
    const [bx1, by1, bx2, by2] = this.bounds;
    const kept: Box[] = [];
    for (const bb of boxes) {
      const x1 = Math.max(bb[0], bx1);
      const y1 = Math.max(bb[1], by1);
      const x2 = Math.min(bb[2], bx2);
      const y2 = Math.min(bb[3], by2);
      if (x2 > x1 && y2 > y1) kept.push([x1, y1, x2, y2]);
    }
    const n = kept.length;
    if (n === 0) return 0;
    // Boxes in x1 order enter the sweep; the active ones are kept in (y1, y2) order, so merging is one pass.
    kept.sort((p, q) => p[0] - q[0]);
    const xs = new Float64Array(2 * n);
    kept.forEach((bb, i) => {
      xs[2 * i] = bb[0];
      xs[2 * i + 1] = bb[2];
    });
    xs.sort();
    let active: Box[] = [];
    let next = 0;
    let area = 0;
    for (let k = 0; k + 1 < xs.length; k++) {
      const xa = xs[k];
      const xb = xs[k + 1];
      if (xb === xa) continue;
      active = active.filter((bb) => bb[2] > xa);
      while (next < n && kept[next][0] <= xa) {
        const r = kept[next++];
        let at = active.length;
        while (
          at > 0 &&
          (active[at - 1][1] > r[1] || (active[at - 1][1] === r[1] && active[at - 1][3] > r[3]))
        )
          at--;
        active.splice(at, 0, r);
      }
      let a = NaN;
      let b = NaN;
      for (const bb of active) {
        if (bb[1] <= b) {
          if (bb[3] > b) b = bb[3];
          continue;
        }
        if (b === b) area += this.rectArea(xa, xb, a, b);
        a = bb[1];
        b = bb[3];
      }
      if (b === b) area += this.rectArea(xa, xb, a, b);
    }
    return area;
  }
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
