import type { ClassDetection } from './nms';

/**
 * Output decoders. Both return boxes in letterboxed model-input pixels; the caller divides by the
 * letterbox scale r to get original-image pixels. Pure functions over the raw output tensor.
 */
export type DecoderKind = 'yolox' | 'yolov8';

export const YOLOX_STRIDES = [8, 16, 32] as const;

/**
 * YOLOX (PROVENANCE.md 1.1): output [1, N, 5 + nc] with N = sum over strides of (S/s)^2, grids in
 * stride order, each row-major. Row: [tx, ty, tw, th, obj, p0..p(nc-1)], obj/p already sigmoid-ed.
 * cx = (tx + gx) * s, cy = (ty + gy) * s, w = exp(tw) * s, h = exp(th) * s; score = obj * max p.
 */
export function decodeYolox(
  output: Float32Array,
  inputSize: number,
  numClasses: number,
  scoreThreshold: number,
  strides: readonly number[] = YOLOX_STRIDES,
): ClassDetection[] {
  const rowLen = 5 + numClasses;
  let expectedRows = 0;
  for (const s of strides) expectedRows += (inputSize / s) ** 2;
  if (output.length !== expectedRows * rowLen)
    throw new RangeError(`YOLOX output has ${output.length} values, expected ${expectedRows}x${rowLen}`);
  const dets: ClassDetection[] = [];
  let row = 0;
  for (const s of strides) {
    const g = inputSize / s;
    for (let gy = 0; gy < g; gy++) {
      for (let gx = 0; gx < g; gx++, row++) {
        const o = row * rowLen;
        const obj = output[o + 4];
        if (obj < scoreThreshold) continue; // score = obj * p <= obj
        let best = 0;
        let bestP = -Infinity;
        for (let c = 0; c < numClasses; c++) {
          const p = output[o + 5 + c];
          if (p > bestP) {
            bestP = p;
            best = c;
          }
        }
        const score = obj * bestP;
        if (score < scoreThreshold) continue;
        const cx = (output[o] + gx) * s;
        const cy = (output[o + 1] + gy) * s;
        const w = Math.exp(output[o + 2]) * s;
        const h = Math.exp(output[o + 3]) * s;
        dets.push({
          classIndex: best,
          score,
          box: { x1: cx - w / 2, y1: cy - h / 2, x2: cx + w / 2, y2: cy + h / 2 },
        });
      }
    }
  }
  return dets;
}

/**
 * YOLOv8-style (Ultralytics export): output [1, 4 + nc, N], channel-major: for anchor i, values
 * [cx, cy, w, h] already decoded in input pixels, then nc class scores (sigmoid-ed), no objectness.
 */
export function decodeYolov8(
  output: Float32Array,
  numAnchors: number,
  numClasses: number,
  scoreThreshold: number,
): ClassDetection[] {
  if (output.length !== (4 + numClasses) * numAnchors)
    throw new RangeError(
      `YOLOv8 output has ${output.length} values, expected ${4 + numClasses}x${numAnchors}`,
    );
  const dets: ClassDetection[] = [];
  for (let i = 0; i < numAnchors; i++) {
    let best = 0;
    let bestP = -Infinity;
    for (let c = 0; c < numClasses; c++) {
      const p = output[(4 + c) * numAnchors + i];
      if (p > bestP) {
        bestP = p;
        best = c;
      }
    }
    if (bestP < scoreThreshold) continue;
    const cx = output[i];
    const cy = output[numAnchors + i];
    const w = output[2 * numAnchors + i];
    const h = output[3 * numAnchors + i];
    dets.push({
      classIndex: best,
      score: bestP,
      box: { x1: cx - w / 2, y1: cy - h / 2, x2: cx + w / 2, y2: cy + h / 2 },
    });
  }
  return dets;
}
