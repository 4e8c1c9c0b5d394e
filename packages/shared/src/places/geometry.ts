/**
 * Plane geometry of the analytics rules. Rules and boxes are given in normalized image coordinates (x right,
 * y down, both 0..1); the decisions are taken on the image, in pixels (`inPixels`, `pointsInPixels`,
 * `imageDistance`). Every test here is an exact sign test on IEEE doubles: no epsilon, so the same input always
 * gives the same answer on every machine.
 */

export type Point = readonly [number, number];
/** An axis-aligned box [x1, y1, x2, y2] with x1 <= x2 and y1 <= y2. */
export type Box = readonly [number, number, number, number];

export const ANCHORS = [
  'bottom_center',
  'center',
  'top_left',
  'top_center',
  'top_right',
  'center_left',
  'center_right',
  'bottom_left',
  'bottom_right',
] as const;
export type Anchor = (typeof ANCHORS)[number];

/** The anchor point of a box; midpoints are (a + b) / 2, as supervision's `get_anchors_coordinates` computes them. */
export function anchorPoint(box: Box, anchor: Anchor): Point {
  const [x1, y1, x2, y2] = box;
  const cx = (x1 + x2) / 2;
  const cy = (y1 + y2) / 2;
  switch (anchor) {
    case 'bottom_center':
      return [cx, y2];
    case 'center':
      return [cx, cy];
    case 'top_left':
      return [x1, y1];
    case 'top_center':
      return [cx, y1];
    case 'top_right':
      return [x2, y1];
    case 'center_left':
      return [x1, cy];
    case 'center_right':
      return [x2, cy];
    case 'bottom_left':
      return [x1, y2];
    case 'bottom_right':
      return [x2, y2];
  }
}

/** The anchor's x alone (no allocation); the same arithmetic as anchorPoint. */
export function anchorX(box: Box, anchor: Anchor): number {
  if (anchor === 'top_left' || anchor === 'center_left' || anchor === 'bottom_left') return box[0];
  if (anchor === 'top_right' || anchor === 'center_right' || anchor === 'bottom_right') return box[2];
  return (box[0] + box[2]) / 2;
}

/** The anchor's y alone (no allocation); the same arithmetic as anchorPoint. */
export function anchorY(box: Box, anchor: Anchor): number {
  if (anchor === 'top_left' || anchor === 'top_center' || anchor === 'top_right') return box[1];
  if (anchor === 'bottom_left' || anchor === 'bottom_center' || anchor === 'bottom_right') return box[3];
  return (box[1] + box[3]) / 2;
}

/** Sign of the cross product (b - a) x (c - a): > 0 when c is counter-clockwise of a->b in x-right/y-up axes. */
export function orient(a: Point, b: Point, c: Point): number {
  return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
}

function onSegment(a: Point, b: Point, p: Point): boolean {
  return (
    orient(a, b, p) === 0 &&
    Math.min(a[0], b[0]) <= p[0] &&
    p[0] <= Math.max(a[0], b[0]) &&
    Math.min(a[1], b[1]) <= p[1] &&
    p[1] <= Math.max(a[1], b[1])
  );
}

/** Whether the closed segments a-b and c-d share at least one point (touching and collinear overlap included). */
export function segmentsIntersect(a: Point, b: Point, c: Point, d: Point): boolean {
  const o1 = Math.sign(orient(a, b, c));
  const o2 = Math.sign(orient(a, b, d));
  const o3 = Math.sign(orient(c, d, a));
  const o4 = Math.sign(orient(c, d, b));
  if (o1 !== o2 && o3 !== o4 && o1 * o2 <= 0 && o3 * o4 <= 0) {
    if (o1 !== 0 || o2 !== 0) return true;
  }
  return onSegment(a, b, c) || onSegment(a, b, d) || onSegment(c, d, a) || onSegment(c, d, b);
}

/** Absolute area of a polygon (shoelace). */
export function polygonArea(poly: readonly Point[]): number {
  let twice = 0;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    twice += poly[j][0] * poly[i][1] - poly[i][0] * poly[j][1];
  }
  return Math.abs(twice) / 2;
}

/**
 * Whether the closed polygon is simple: no repeated vertex, no two non-adjacent edges sharing a point, and
 * no edge folding back onto its neighbour (a spike). O(n^2), n <= 32.
 */
export function isSimplePolygon(poly: readonly Point[]): boolean {
  const n = poly.length;
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) if (poly[i][0] === poly[j][0] && poly[i][1] === poly[j][1]) return false;
  for (let i = 0; i < n; i++) {
    const a = poly[i];
    const b = poly[(i + 1) % n];
    // Adjacent edge b-c: collinear and pointing back over a-b is a spike.
    const c = poly[(i + 2) % n];
    if (orient(a, b, c) === 0 && (onSegment(a, b, c) || onSegment(b, c, a))) return false;
    for (let j = i + 2; j < n; j++) {
      if (i === 0 && j === n - 1) continue; // the closing edge is adjacent to the first one
      if (segmentsIntersect(a, b, poly[j], poly[(j + 1) % n])) return false;
    }
  }
  return true;
}

/** Bounding box of a polygon. */
export function polygonBounds(poly: readonly Point[]): Box {
  let x1 = Infinity;
  let y1 = Infinity;
  let x2 = -Infinity;
  let y2 = -Infinity;
  for (const [x, y] of poly) {
    if (x < x1) x1 = x;
    if (x > x2) x2 = x;
    if (y < y1) y1 = y;
    if (y > y2) y2 = y;
  }
  return [x1, y1, x2, y2];
}

/**
 * Whether p lies in the polygon. A point on an edge or a vertex counts as inside; elsewhere the even-odd
 * rule (crossing number) decides. `bounds` is the polygon's bounding box (a quick reject).
 */
export function pointInPolygon(p: Point, poly: readonly Point[], bounds: Box): boolean {
  const [x, y] = p;
  if (x < bounds[0] || x > bounds[2] || y < bounds[1] || y > bounds[3]) return false;
  let inside = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const a = poly[j];
    const b = poly[i];
    // On the edge (inside its bounding box first: the cheap test).
    if (
      x >= Math.min(a[0], b[0]) &&
      x <= Math.max(a[0], b[0]) &&
      y >= Math.min(a[1], b[1]) &&
      y <= Math.max(a[1], b[1]) &&
      orient(a, b, p) === 0
    )
      return true;
    if (b[1] > y !== a[1] > y) {
      const xCross = a[0] + ((y - a[1]) * (b[0] - a[0])) / (b[1] - a[1]);
      if (x < xCross) inside = !inside;
    }
  }
  return inside;
}

/**
 * A polygon's edges, precomputed for pointInPolygonXY. Edge i runs from a = vertex i - 1 (the last vertex for
 * i = 0) to b = vertex i: `ax`, `ay` its start, `dx` = bx - ax, `dy` = by - ay, and its x and y ranges.
 */
export interface PolygonXY {
  ax: Float64Array;
  ay: Float64Array;
  dx: Float64Array;
  dy: Float64Array;
  minX: Float64Array;
  maxX: Float64Array;
  minY: Float64Array;
  maxY: Float64Array;
  bounds: Box;
}

export function polygonXY(poly: readonly Point[]): PolygonXY {
  const n = poly.length;
  const edges = Array.from({ length: 8 }, () => new Float64Array(n));
  const [ax, ay, dx, dy, minX, maxX, minY, maxY] = edges;
  for (let i = 0; i < n; i++) {
    const [x0, y0] = poly[(i + n - 1) % n];
    const [x1, y1] = poly[i];
    ax[i] = x0;
    ay[i] = y0;
    dx[i] = x1 - x0;
    dy[i] = y1 - y0;
    minX[i] = Math.min(x0, x1);
    maxX[i] = Math.max(x0, x1);
    minY[i] = Math.min(y0, y1);
    maxY[i] = Math.max(y0, y1);
  }
  return { ax, ay, dx, dy, minX, maxX, minY, maxY, bounds: polygonBounds(poly) };
}

/**
 * pointInPolygon on a PolygonXY, without allocation: the same answers from the same arithmetic. An edge whose
 * y range misses y can neither hold the point nor cross its ray; within the range, (by > y) !== (ay > y) is
 * y < max(ay, by).
 */
export function pointInPolygonXY(x: number, y: number, poly: PolygonXY): boolean {
  const { bounds, minY, maxY } = poly;
  if (x < bounds[0] || x > bounds[2] || y < bounds[1] || y > bounds[3]) return false;
  let inside = false;
  for (let i = 0; i < minY.length; i++) {
    if (y < minY[i] || y > maxY[i]) continue;
    const ax = poly.ax[i];
    const ay = poly.ay[i];
    const dx = poly.dx[i];
    const dy = poly.dy[i];
    if (x >= poly.minX[i] && x <= poly.maxX[i] && dx * (y - ay) - dy * (x - ax) === 0) return true;
    if (y < maxY[i] && x < ax + ((y - ay) * dx) / dy) inside = !inside;
  }
  return inside;
}

/** A frame's size in pixels: the image whose width and height the normalized coordinates are fractions of. */
export interface FrameSize {
  width: number;
  height: number;
}

/** Whether rules can be decided on a frame of this size: both sides finite and above 0. */
export function hasPixels(size: FrameSize): boolean {
  return size.width > 0 && size.height > 0 && Number.isFinite(size.width) && Number.isFinite(size.height);
}

/**
 * `make` of a frame size, made again only when the size differs from the last call's (a task's frames keep
 * their size): what rules precompute in pixels once per size.
 */
export function perFrameSize<T>(make: (size: FrameSize) => T): (size: FrameSize) => T {
  let width = NaN;
  let height = NaN;
  let value: T | undefined;
  return (size) => {
    if (value === undefined || size.width !== width || size.height !== height) {
      width = size.width;
      height = size.height;
      value = make(size);
    }
    return value;
  };
}

/** A normalized box in the pixels of a frame: [x1·width, y1·height, x2·width, y2·height]. */
export function inPixels(box: Box, size: FrameSize): Box {
  const { width: w, height: h } = size;
  return [box[0] * w, box[1] * h, box[2] * w, box[3] * h];
}

/** Normalized points in the pixels of a frame: [x·width, y·height]. */
export function pointsInPixels(points: readonly Point[], size: FrameSize): Point[] {
  return points.map(([x, y]): Point => [x * size.width, y * size.height]);
}

/**
 * The distance on the image between two normalized points, in units of the frame's longer side: the pixel
 * distance divided by max(width, height). A circle of this radius is round on the image; on a square frame it
 * equals `distance`.
 */
export function imageDistance(ax: number, ay: number, bx: number, by: number, size: FrameSize): number {
  const { width: w, height: h } = size;
  return Math.hypot((ax - bx) * w, (ay - by) * h) / Math.max(w, h);
}

/** A box stored as [cx, cy, w, h] (normalized) as [x1, y1, x2, y2], clamped to [0, 1]. */
export function cxcywhToBox(cx: number, cy: number, w: number, h: number): Box {
  const clamp = (v: number): number => Math.min(1, Math.max(0, v));
  return [clamp(cx - w / 2), clamp(cy - h / 2), clamp(cx + w / 2), clamp(cy + h / 2)];
}
