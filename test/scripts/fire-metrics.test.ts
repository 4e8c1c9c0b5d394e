/**
 * scripts/fire-metrics.js scores the fire model's quality gate (test/e2e/fire-smoke-model.test.ts): IoU,
 * greedy matching at IoU >= 0.5 by descending score, and all-point AP. Known answers worked out by hand,
 * then the AP50 of a small fixture (test/fixtures/fire-metrics-boxes.json: the fire boxes of seven
 * dfire-valid images with made-up detections around them, shifted, duplicated, missed and false) against
 * pycocotools, computed now by test/scripts/pycocotools-ap50.py (`pip install pycocotools`; scripts/test-setup.sh does).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface Box {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}
interface Det {
  box: Box;
  score: number;
}
interface FireRecord {
  gts: Box[];
  fire: Det[];
}
interface Scores {
  images: number;
  tp: number;
  fp: number;
  fn: number;
  tn: number;
  precision: number;
  recall: number;
  ap50: number;
  gtBoxes: number;
}
interface FireMetrics {
  iou(a: Box, b: Box): number;
  apAllPoints(dets: { score: number; tp: boolean }[], nGt: number): number;
  matchImage(dets: Det[], gts: Box[]): { score: number; tp: boolean }[];
  evaluate(records: FireRecord[], scoreOf: (c: Det) => number, lowerBound: number): Scores;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const metrics = require('../../scripts/fire-metrics') as FireMetrics;

const repoRoot = path.resolve(__dirname, '../..');
const FIXTURE = path.join(repoRoot, 'test/fixtures/fire-metrics-boxes.json');
const box = (x1: number, y1: number, x2: number, y2: number): Box => ({ x1, y1, x2, y2 });
const det = (b: Box, score: number): Det => ({ box: b, score });
const ap50 = (records: FireRecord[]) => metrics.evaluate(records, (c) => c.score, 0.5).ap50;

const A = box(0, 0, 10, 10);
const B = box(100, 100, 120, 140);
const C = box(200, 0, 230, 30);

describe('iou', () => {
  it('is 1 for the same box, 0 for disjoint or edge-touching boxes, 1/3 for a half-shifted square', () => {
    expect(metrics.iou(A, A)).toBe(1);
    expect(metrics.iou(A, B)).toBe(0);
    expect(metrics.iou(A, box(10, 0, 20, 10))).toBe(0);
    expect(metrics.iou(A, box(5, 0, 15, 10))).toBeCloseTo(50 / 150, 12);
    expect(metrics.iou(box(5, 0, 15, 10), A)).toBeCloseTo(50 / 150, 12);
  });
});

describe('AP50 known answers', () => {
  it('every box found exactly, each once: AP = 1', () => {
    const records = [
      { gts: [A, B], fire: [det(A, 0.9), det(B, 0.4)] },
      { gts: [C], fire: [det(C, 0.7)] },
    ];
    expect(ap50(records)).toBe(1);
  });

  it('no detections: AP = 0', () => {
    expect(
      ap50([
        { gts: [A, B], fire: [] },
        { gts: [C], fire: [] },
      ]),
    ).toBe(0);
  });

  it('only false detections: AP = 0', () => {
    expect(ap50([{ gts: [A], fire: [det(B, 0.9), det(C, 0.8)] }])).toBe(0);
  });

  it('a second detection of a matched box is a false positive, ranked where its score puts it', () => {
    const dets = [det(A, 0.9), det(box(0, 0, 10, 9), 0.8), det(B, 0.7)];
    expect(metrics.matchImage(dets, [A, B]).map((d) => d.tp)).toEqual([true, false, true]);
    // TP, FP, TP over 2 boxes: recall 0.5 at precision 1, then 1 at 2/3.
    expect(ap50([{ gts: [A, B], fire: dets }])).toBeCloseTo(0.5 * 1 + 0.5 * (2 / 3), 12);
  });

  it('IoU exactly 0.5 matches; just under it does not', () => {
    const half = box(0, 0, 10, 5); // 50 / 100
    const under = box(0, 0, 10, 4.99);
    expect(metrics.iou(A, half)).toBe(0.5);
    expect(metrics.iou(A, under)).toBeLessThan(0.5);
    expect(metrics.matchImage([det(half, 0.9)], [A])).toEqual([{ score: 0.9, tp: true }]);
    expect(metrics.matchImage([det(under, 0.9)], [A])).toEqual([{ score: 0.9, tp: false }]);
    expect(ap50([{ gts: [A], fire: [det(half, 0.9)] }])).toBe(1);
    expect(ap50([{ gts: [A], fire: [det(under, 0.9)] }])).toBe(0);
  });

  it('matches by descending score whatever the input order: the higher score takes the box', () => {
    const exact = det(A, 0.3);
    const looser = det(box(0, 0, 10, 7), 0.9); // IoU 0.7
    expect(metrics.matchImage([exact, looser], [A])).toEqual([
      { score: 0.9, tp: true },
      { score: 0.3, tp: false },
    ]);
  });

  it('ranks detections across images by score: a false positive above a true one halves AP', () => {
    const hit = { gts: [A], fire: [det(A, 0.6)] };
    expect(ap50([hit, { gts: [], fire: [det(B, 0.9)] }])).toBeCloseTo(0.5, 12);
    expect(ap50([{ gts: [], fire: [det(B, 0.5)] }, hit])).toBe(1);
  });

  it('integrates the monotone precision envelope over every recall step', () => {
    const ranked = (flags: boolean[]) => flags.map((tp, i) => ({ score: 1 - i / 100, tp }));
    // TP F F TP TP over 3 boxes: precision 1, 1/2, 1/3, 1/2, 3/5; the envelope lifts 1/2 to 3/5.
    expect(metrics.apAllPoints(ranked([true, false, false, true, true]), 3)).toBeCloseTo(
      (1 + 0.6 + 0.6) / 3,
      12,
    );
    // TP F TP F F TP over 4 boxes (one never found): 0.25 x 1 + 0.25 x 2/3 + 0.25 x 1/2.
    expect(metrics.apAllPoints(ranked([true, false, true, false, false, true]), 4)).toBeCloseTo(13 / 24, 12);
    // Input order does not matter: the same detections reversed.
    expect(metrics.apAllPoints(ranked([true, false, false, true, true]).reverse(), 3)).toBeCloseTo(
      (1 + 0.6 + 0.6) / 3,
      12,
    );
  });

  it('counts images at the lower bound: any detection scoring >= it makes an image positive', () => {
    const r = metrics.evaluate(
      [
        { gts: [A], fire: [det(B, 0.5)] }, // positive image, predicted at exactly the bound: TP
        { gts: [A], fire: [det(A, 0.49)] }, // positive, below the bound: FN
        { gts: [], fire: [det(C, 0.8)] }, // negative, predicted: FP
        { gts: [], fire: [] }, // TN
      ],
      (c) => c.score,
      0.5,
    );
    expect(r).toMatchObject({
      images: 4,
      tp: 1,
      fn: 1,
      fp: 1,
      tn: 1,
      precision: 0.5,
      recall: 0.5,
      gtBoxes: 2,
    });
  });
});

describe('AP50 against pycocotools', () => {
  interface Fixture {
    images: { gts: number[][]; dets: { bbox: number[]; score: number }[] }[];
  }
  const xywh = ([x, y, w, h]: number[]): Box => box(x, y, x + w, y + h);

  it('agrees within 0.001 on the fixture', () => {
    const fixture = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Fixture;
    const records = fixture.images.map((im) => ({
      gts: im.gts.map(xywh),
      fire: im.dets.map((d) => det(xywh(d.bbox), d.score)),
    }));
    // The fixture exercises misses, false and duplicate detections, and an image without fire.
    const matched = records.flatMap((r) => metrics.matchImage(r.fire, r.gts));
    const hits = matched.filter((m) => m.tp).length;
    expect(hits).toBeGreaterThan(0);
    expect(matched.length - hits).toBeGreaterThanOrEqual(5);
    expect(records.reduce((n, r) => n + r.gts.length, 0) - hits).toBeGreaterThanOrEqual(3);
    expect(records.some((r) => r.gts.length === 0 && r.fire.length > 0)).toBe(true);

    const out = execFileSync('python3', [path.join(__dirname, 'pycocotools-ap50.py'), FIXTURE], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const reference = (JSON.parse(out) as { ap50: number }).ap50;
    const ours = ap50(records);
    expect(reference).toBeGreaterThan(0.1);
    expect(reference).toBeLessThan(0.9);
    expect(Math.abs(ours - reference)).toBeLessThan(0.001);
  });
});
