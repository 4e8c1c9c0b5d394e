import { PolygonCover } from '@vision/shared';
import {
  isSimplePolygon,
  pointInPolygon,
  polygonArea,
  polygonBounds,
  type Box,
  type Point,
} from '@vision/shared';

/** Oracle: Sutherland–Hodgman clipping of the polygon by one rectangle, then the shoelace area. */
function clipArea(poly: readonly Point[], r: Box): number {
  let p: Point[] = [...poly];
  const sides: [(q: Point) => boolean, (a: Point, b: Point) => Point][] = [
    [(q) => q[0] >= r[0], (a, b) => [r[0], a[1] + ((r[0] - a[0]) * (b[1] - a[1])) / (b[0] - a[0])]],
    [(q) => q[0] <= r[2], (a, b) => [r[2], a[1] + ((r[2] - a[0]) * (b[1] - a[1])) / (b[0] - a[0])]],
    [(q) => q[1] >= r[1], (a, b) => [a[0] + ((r[1] - a[1]) * (b[0] - a[0])) / (b[1] - a[1]), r[1]]],
    [(q) => q[1] <= r[3], (a, b) => [a[0] + ((r[3] - a[1]) * (b[0] - a[0])) / (b[1] - a[1]), r[3]]],
  ];
  for (const [inside, cut] of sides) {
    const out: Point[] = [];
    p.forEach((cur, i) => {
      const prev = p[(i + p.length - 1) % p.length];
      if (inside(cur) !== inside(prev)) out.push(cut(prev, cur));
      if (inside(cur)) out.push(cur);
    });
    p = out;
    if (p.length < 3) return 0;
  }
  return polygonArea(p);
}

/** Oracle: the union of boxes cut into disjoint cells of the grid of all box edges. */
function unionCells(boxes: readonly Box[]): Box[] {
  const xs = [...new Set(boxes.flatMap((b) => [b[0], b[2]]))].sort((a, b) => a - b);
  const ys = [...new Set(boxes.flatMap((b) => [b[1], b[3]]))].sort((a, b) => a - b);
  const cells: Box[] = [];
  for (let i = 0; i + 1 < xs.length; i++)
    for (let j = 0; j + 1 < ys.length; j++) {
      const cx = (xs[i] + xs[i + 1]) / 2;
      const cy = (ys[j] + ys[j + 1]) / 2;
      if (boxes.some((b) => b[0] <= cx && cx <= b[2] && b[1] <= cy && cy <= b[3]))
        cells.push([xs[i], ys[j], xs[i + 1], ys[j + 1]]);
    }
  return cells;
}

function prng(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 16807) % 2147483647) / 2147483647;
}

const CONCAVE: Point[] = [
  [0.1, 0.1],
  [0.9, 0.1],
  [0.9, 0.9],
  [0.5, 0.3],
  [0.1, 0.9],
];

describe('coverage: area of the union of boxes inside a polygon', () => {
  it('equals clipping each disjoint cell of the union (convex and concave polygons, random boxes)', () => {
    const rnd = prng(42);
    const polys: Point[][] = [
      CONCAVE,
      [
        [0.2, 0.1],
        [0.8, 0.2],
        [0.7, 0.8],
        [0.15, 0.6],
      ],
    ];
    for (const poly of polys) {
      const cover = new PolygonCover(poly);
      for (let trial = 0; trial < 40; trial++) {
        const boxes: Box[] = Array.from({ length: 1 + Math.floor(rnd() * 12) }, () => {
          const x = rnd();
          const y = rnd();
          return [x, y, Math.min(1, x + rnd() * 0.4), Math.min(1, y + rnd() * 0.4)];
        });
        const expected = unionCells(boxes).reduce((sum, c) => sum + clipArea(poly, c), 0);
        expect(Math.abs(cover.coveredArea(boxes) - expected)).toBeLessThan(1e-12);
      }
    }
  });

  it('counts overlapping boxes once and is exact on simple cases', () => {
    const cover = new PolygonCover(CONCAVE);
    expect(cover.area).toBeCloseTo(0.8 * 0.8 - (0.8 * 0.6) / 2, 14);
    expect(cover.coveredArea([[0, 0, 1, 1]])).toBeCloseTo(cover.area, 14);
    expect(
      cover.coveredArea([
        [0, 0, 1, 1],
        [0.2, 0.2, 0.6, 0.6],
      ]),
    ).toBeCloseTo(cover.area, 14);
    // The notch: the band y in [0.5, 0.9] between x 0.3 and 0.7 is outside except where the edges pass.
    expect(cover.coveredArea([[0.1, 0.1, 0.9, 0.2]])).toBeCloseTo(0.08, 14);
    expect(cover.overlaps([0.45, 0.5, 0.55, 0.6])).toBe(false);
    expect(cover.overlaps([0.45, 0.2, 0.55, 0.6])).toBe(true);
    expect(cover.coveredArea([])).toBe(0);
  });
});

describe('polygons', () => {
  it('a point on an edge or a vertex is inside; the notch of a concave polygon is outside', () => {
    const b = polygonBounds(CONCAVE);
    expect(pointInPolygon([0.5, 0.1], CONCAVE, b)).toBe(true);
    expect(pointInPolygon([0.9, 0.9], CONCAVE, b)).toBe(true);
    expect(pointInPolygon([0.5, 0.6], CONCAVE, b)).toBe(false);
    expect(pointInPolygon([0.5, 0.2], CONCAVE, b)).toBe(true);
    expect(pointInPolygon([0.95, 0.5], CONCAVE, b)).toBe(false);
  });

  it('tells simple polygons from self-intersecting ones', () => {
    expect(isSimplePolygon(CONCAVE)).toBe(true);
    expect(
      isSimplePolygon([
        [0, 0],
        [1, 1],
        [1, 0],
        [0, 1],
      ]),
    ).toBe(false);
    // A vertex touching a non-adjacent edge.
    expect(
      isSimplePolygon([
        [0, 0],
        [1, 0],
        [1, 1],
        [0.5, 0],
        [0, 1],
      ]),
    ).toBe(false);
  });
});
