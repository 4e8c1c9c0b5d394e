import { letterboxFor, packBgrTensor, packGbrpTensor, LETTERBOX_PAD_VALUE } from '../../src/model/letterbox';
import { contentRgb } from '../../src/scenes/frames';
import { decodeYolov8, decodeYolox } from '../../src/model/decoders';
import { iou, nmsClassAware } from '../../src/model/nms';
import { clampBox, toNormalizedBBox, unletterbox } from '../../src/bbox';
import { parseLabels } from '../../src/model/onnx-model';

describe('letterbox', () => {
  it('scales by min(S/h, S/w) and rounds the resized size', () => {
    expect(letterboxFor(640, 480, 416)).toEqual({ r: 0.65, width: 416, height: 312, size: 416 });
    const tall = letterboxFor(480, 640, 416);
    expect(tall.width).toBe(312);
    expect(tall.height).toBe(416);
    const odd = letterboxFor(3072, 1728, 416);
    expect(odd.r).toBeCloseTo(416 / 3072, 12);
    expect(odd.height).toBe(Math.round(1728 * (416 / 3072))); // 234
    expect(letterboxFor(100, 50, 416)).toMatchObject({ r: 4.16, width: 416, height: 208 });
  });

  it('rejects empty images', () => {
    expect(() => letterboxFor(0, 10, 416)).toThrow(RangeError);
  });

  it('packs RGB pixels as BGR planes at the top-left of a 114 canvas', () => {
    // 2x1 image: pixel0 = (r=10,g=20,b=30), pixel1 = (40,50,60), into a 4x4 canvas
    const px = Uint8Array.from([10, 20, 30, 40, 50, 60]);
    const t = packBgrTensor(px, 2, 1, 4, 'rgb');
    expect(t.length).toBe(3 * 16);
    expect([t[0], t[16], t[32]]).toEqual([30, 20, 10]); // B, G, R of pixel 0
    expect([t[1], t[17], t[33]]).toEqual([60, 50, 40]);
    expect(t[2]).toBe(LETTERBOX_PAD_VALUE);
    expect(t[4]).toBe(LETTERBOX_PAD_VALUE); // second row is padding
    expect(t[47]).toBe(LETTERBOX_PAD_VALUE);
    const tb = packBgrTensor(Uint8Array.from([30, 20, 10]), 1, 1, 4, 'bgr');
    expect([tb[0], tb[16], tb[32]]).toEqual([30, 20, 10]);
  });

  it('packs a planar G, B, R canvas (gbrp) into the same BGR planes as the interleaved one', () => {
    const size = 3;
    const plane = size * size;
    const bgr = Uint8Array.from({ length: 3 * plane }, (_, i) => (i * 37) % 251);
    const gbrp = new Uint8Array(3 * plane);
    for (let i = 0; i < plane; i++) {
      gbrp[i] = bgr[3 * i + 1]; // G
      gbrp[plane + i] = bgr[3 * i]; // B
      gbrp[2 * plane + i] = bgr[3 * i + 2]; // R
    }
    expect(Array.from(packGbrpTensor(gbrp, size))).toEqual(
      Array.from(packBgrTensor(bgr, size, size, size, 'bgr')),
    );
    expect(() => packGbrpTensor(gbrp.subarray(1), size)).toThrow(RangeError);
  });

  it('copies the content of a planar canvas out as interleaved RGB', () => {
    // 4x4 canvas, content 2x1 at the top-left: pixel0 = (r=1,g=2,b=3), pixel1 = (4,5,6).
    const planes = Buffer.alloc(48, LETTERBOX_PAD_VALUE);
    [2, 5].forEach((g, x) => (planes[x] = g));
    [3, 6].forEach((b, x) => (planes[16 + x] = b));
    [1, 4].forEach((r, x) => (planes[32 + x] = r));
    const letterbox = { r: 1, width: 2, height: 1, size: 4 };
    expect(Array.from(contentRgb({ planes, letterbox, width: 2, height: 1 }))).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

/** Builds a YOLOX output for input size S and nc classes with all-zero rows and given cells set. */
function yoloxOutput(
  size: number,
  nc: number,
  cells: { stride: number; gx: number; gy: number; row: number[] }[],
) {
  const strides = [8, 16, 32];
  const counts = strides.map((s) => (size / s) ** 2);
  const total = counts.reduce((a, b) => a + b, 0);
  const out = new Float32Array(total * (5 + nc));
  for (const c of cells) {
    const si = strides.indexOf(c.stride);
    const before = counts.slice(0, si).reduce((a, b) => a + b, 0);
    const g = size / c.stride;
    const idx = before + c.gy * g + c.gx;
    out.set(c.row, idx * (5 + nc));
  }
  return out;
}

describe('YOLOX decoder', () => {
  it('decodes grid offsets, exp sizes and obj*cls score for each stride', () => {
    const nc = 3;
    const out = yoloxOutput(64, nc, [
      // stride 16, cell (2,1): tx=0.5, ty=0.25, tw=ln 2, th=0 ; obj 0.9, class 2 = 0.8
      { stride: 16, gx: 2, gy: 1, row: [0.5, 0.25, Math.log(2), 0, 0.9, 0.1, 0.2, 0.8] },
      // stride 8, below threshold (0.5*0.5 = 0.25)
      { stride: 8, gx: 0, gy: 0, row: [0, 0, 0, 0, 0.5, 0.5, 0, 0] },
      // stride 32, cell (1,1): class 0
      { stride: 32, gx: 1, gy: 1, row: [0, 0, 0, 0, 1, 0.6, 0, 0] },
    ]);
    const dets = decodeYolox(out, 64, nc, 0.3);
    expect(dets).toHaveLength(2);
    const a = dets.find((d) => d.classIndex === 2)!;
    expect(a.score).toBeCloseTo(0.72, 6);
    // cx = (0.5+2)*16 = 40, cy = (0.25+1)*16 = 20, w = 2*16 = 32, h = 16
    expect(a.box.x1).toBeCloseTo(24, 4);
    expect(a.box.x2).toBeCloseTo(56, 4);
    expect(a.box.y1).toBeCloseTo(12, 4);
    expect(a.box.y2).toBeCloseTo(28, 4);
    const b = dets.find((d) => d.classIndex === 0)!;
    expect(b.box).toEqual({ x1: 16, y1: 16, x2: 48, y2: 48 });
  });

  it('rejects an output of the wrong size', () => {
    expect(() => decodeYolox(new Float32Array(10), 64, 3, 0.3)).toThrow(RangeError);
  });
});

describe('YOLOv8 decoder', () => {
  it('reads channel-major [4+nc, N] with decoded cxcywh and no objectness', () => {
    const nc = 2;
    const n = 3;
    const out = new Float32Array((4 + nc) * n);
    const set = (ch: number, i: number, v: number) => (out[ch * n + i] = v);
    // anchor 1: box cx=100 cy=50 w=20 h=10, class 1 score 0.9
    set(0, 1, 100);
    set(1, 1, 50);
    set(2, 1, 20);
    set(3, 1, 10);
    set(5, 1, 0.9);
    set(4, 1, 0.2);
    // anchor 2: low score
    set(4, 2, 0.1);
    const dets = decodeYolov8(out, n, nc, 0.25);
    expect(dets).toEqual([
      { classIndex: 1, score: expect.closeTo(0.9, 6), box: { x1: 90, y1: 45, x2: 110, y2: 55 } },
    ]);
    expect(() => decodeYolov8(out, n + 1, nc, 0.25)).toThrow(RangeError);
  });
});

describe('NMS', () => {
  const box = (x1: number, y1: number, x2: number, y2: number) => ({ x1, y1, x2, y2 });
  it('computes IoU', () => {
    expect(iou(box(0, 0, 10, 10), box(0, 0, 10, 10))).toBe(1);
    expect(iou(box(0, 0, 10, 10), box(5, 0, 15, 10))).toBeCloseTo(50 / 150, 9);
    expect(iou(box(0, 0, 10, 10), box(20, 20, 30, 30))).toBe(0);
  });
  it('suppresses overlapping boxes of the same class only, above IoU 0.45', () => {
    const dets = [
      { classIndex: 0, score: 0.6, box: box(1, 0, 11, 10) }, // IoU with best ~0.82 -> suppressed
      { classIndex: 0, score: 0.9, box: box(0, 0, 10, 10) },
      { classIndex: 1, score: 0.5, box: box(0, 0, 10, 10) }, // other class kept
      { classIndex: 0, score: 0.4, box: box(6, 0, 16, 10) }, // IoU 0.25 with best -> kept
    ];
    const kept = nmsClassAware(dets, 0.45);
    expect(kept.map((d) => d.score)).toEqual([0.9, 0.5, 0.4]);
  });
});

describe('boxes', () => {
  it('undoes the letterbox scale and clamps to the image', () => {
    expect(unletterbox({ x1: 65, y1: 13, x2: 130, y2: 26 }, 0.65)).toEqual({
      x1: 100,
      y1: 20,
      x2: 200,
      y2: 40,
    });
    expect(clampBox({ x1: -5, y1: -1, x2: 700, y2: 30 }, 640, 480)).toEqual({
      x1: 0,
      y1: 0,
      x2: 640,
      y2: 30,
    });
  });
  it('converts to cxcywh_normalized within [0,1]', () => {
    const b = toNormalizedBBox({ x1: 160, y1: 120, x2: 480, y2: 360 }, 640, 480);
    expect(b).toEqual({ format: 'cxcywh_normalized', cx: 0.5, cy: 0.5, width: 0.5, height: 0.5 });
    const out = toNormalizedBBox({ x1: -100, y1: -50, x2: 1000, y2: 100 }, 640, 480);
    for (const v of [out.cx, out.cy, out.width, out.height]) {
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThanOrEqual(1);
    }
    expect(out.width).toBe(1);
  });
  it('parses label files', () => {
    expect(parseLabels('person\r\nbicycle\n\n')).toEqual(['person', 'bicycle']);
  });
});
