import {
  BEST_SHOT,
  bestShotCandidates,
  detectionSizeOf,
  replacesKept,
  sizeRuleOf,
  type Shot,
} from '../../src/domain/evidence/best-shot';
import { bestShotPicks } from '../../src/domain/evidence/plan';
import type { StoredFrame, StoredObject } from '../../src/domain/frames';

/** A 480 × 360 camera (detected at 416 × 312), the box given in detection pixels: centre x, y, width, height. */
const W = 416;
const H = 312;
const px = (
  t: string | undefined,
  s: number,
  cx: number,
  cy: number,
  w: number,
  h: number,
): StoredObject => ({
  l: 'person',
  s,
  b: [cx / W, cy / H, w / W, h / H],
  ...(t !== undefined ? { t } : {}),
});
const frame = (seq: number, objects: StoredObject[]): StoredFrame => ({
  taskId: 't1',
  seq,
  frameId: `t1:${seq}`,
  frameTimeMs: seq * 200,
  width: 480,
  height: 360,
  objects,
});
const CAMERA = { width: 480, height: 360 };

describe('the best shot of a track', () => {
  it('measures boxes at the detection size: the longer side at the models’ input', () => {
    expect(detectionSizeOf(CAMERA)).toEqual({ width: 416, height: 312 });
    expect(detectionSizeOf({ width: 1920, height: 1080 })).toEqual({ width: 416, height: 234 });
    expect(detectionSizeOf({ width: 640, height: 640 })).toEqual({ width: 416, height: 416 });
    // A frame without a size (never stored so) is taken as square.
    expect(detectionSizeOf({ width: 0, height: 0 })).toEqual({ width: 416, height: 416 });
  });

  it('a walking person of a wide surveillance view passes: 17 × 43 px, 0.6 % of the frame', () => {
    const person = px('1', 0.6, 200, 150, 17, 43);
    expect(((17 / W) * 43) / H).toBeLessThan(0.01);
    expect(sizeRuleOf(person, CAMERA)).toBe('met');
  });

  it('the size rule: sides of at least 8 and 16 px, either way, 2 px from every edge', () => {
    const { minShortSidePx: a, minLongSidePx: b, edgeMarginPx: m } = BEST_SHOT;
    expect([a, b, m]).toEqual([8, 16, 2]);
    expect(sizeRuleOf(px('1', 0.9, 200, 150, a, b), CAMERA)).toBe('met');
    // A car side on: long and low.
    expect(sizeRuleOf(px('1', 0.9, 200, 150, 55, 18), CAMERA)).toBe('met');
    expect(sizeRuleOf(px('1', 0.9, 200, 150, b, a), CAMERA)).toBe('met');
    expect(sizeRuleOf(px('1', 0.9, 200, 150, a - 1, 40), CAMERA)).toBe('too_small');
    expect(sizeRuleOf(px('1', 0.9, 200, 150, 40, a - 1), CAMERA)).toBe('too_small');
    expect(sizeRuleOf(px('1', 0.9, 200, 150, b - 1, b - 1), CAMERA)).toBe('too_small');
    // Exactly the margin from the left and top edges passes; a pixel less touches the edge.
    expect(sizeRuleOf(px('1', 0.9, m + 10, m + 20, 20, 40), CAMERA)).toBe('met');
    expect(sizeRuleOf(px('1', 0.9, m + 9, 150, 20, 40), CAMERA)).toBe('at_edge');
    expect(sizeRuleOf(px('1', 0.9, 200, H - m - 20 + 1, 20, 40), CAMERA)).toBe('at_edge');
    expect(sizeRuleOf(px('1', 0.9, W - m - 10 + 1, 150, 20, 40), CAMERA)).toBe('at_edge');
    // A small box at the edge is at the edge: the worse of the two.
    expect(sizeRuleOf(px('1', 0.9, 2, 150, 4, 4), CAMERA)).toBe('at_edge');
    // A box half out of the picture is clamped to it, and touches the edge.
    expect(sizeRuleOf(px('1', 0.9, 0, 150, 60, 100), CAMERA)).toBe('at_edge');
  });

  it('a kept picture is replaced by a better rule, or by the same rule 0.05 higher', () => {
    const kept: Shot = { score: 0.6, rule: 'too_small' };
    expect(replacesKept({ score: 0.3, rule: 'met' }, kept)).toBe(true);
    expect(replacesKept({ score: 0.99, rule: 'at_edge' }, kept)).toBe(false);
    expect(replacesKept({ score: 0.64, rule: 'too_small' }, kept)).toBe(false);
    expect(replacesKept({ score: 0.65, rule: 'too_small' }, kept)).toBe(true);
    expect(replacesKept({ score: 0.1, rule: 'at_edge' }, undefined)).toBe(true);
  });

  it('every track gets a candidate: its best rule, then its best score, the earliest of equal ones', () => {
    const frames = [
      frame(1, [px('a', 0.5, 200, 150, 20, 50), px('b', 0.9, 200, 150, 5, 10), px('c', 0.7, 1, 150, 20, 50)]),
      frame(2, [px('a', 0.8, 210, 150, 20, 50), px('b', 0.6, 100, 150, 6, 10), px('c', 0.9, 3, 150, 20, 50)]),
      frame(3, [
        px('a', 0.8, 220, 150, 20, 50),
        px('a', 0.99, 220, 150, 20, 50),
        px(undefined, 1, 9, 9, 9, 9),
      ]),
      frame(4, [px('a', 0.95, 400, 150, 30, 60), px('c', 0.95, 0, 150, 20, 50)]),
    ];
    const got = bestShotCandidates(frames, new Map());
    expect(got.map((c) => [c.trackId, c.seq, c.score, c.rule])).toEqual([
      // b never passes: its best score, too small; c only touches the edge: its best score at the edge (0.95).
      ['b', 1, 0.9, 'too_small'],
      // a: its best passing box, the earliest 0.8 (its second object in frame 3 is not its own; 0.95 at the edge).
      ['a', 2, 0.8, 'met'],
      ['c', 4, 0.95, 'at_edge'],
    ]);
    [200 / W, 125 / H, 220 / W, 175 / H].forEach((v, i) => expect(got[1].box[i]).toBeCloseTo(v, 12));
  });

  it('a candidate is kept only when it replaces the kept picture', () => {
    const frames = [frame(1, [px('a', 0.7, 200, 150, 20, 50), px('b', 0.9, 200, 150, 5, 10)])];
    const kept = new Map<string, Shot>([
      ['a', { score: 0.68, rule: 'met' }],
      ['b', { score: 0.5, rule: 'too_small' }],
    ]);
    expect(bestShotCandidates(frames, kept).map((c) => c.trackId)).toEqual(['b']);
    // The picks of a step carry the rule the picture will say.
    expect(bestShotPicks(frames, kept)).toEqual([
      {
        what: 'track',
        id: 'b',
        seq: 1,
        drawing: { box: expect.any(Array) as unknown },
        score: 0.9,
        rule: 'too_small',
      },
    ]);
  });
});
