/**
 * Small raster helpers for the fire/smoke detector: an RGB image reduced by area averaging to a
 * working resolution, and binary masks. Pure functions, no I/O.
 */
import type { RgbImage } from '../detection-types';

// Math functions bound once per module: looking globals up inside hot pixel loops is slow when the
// code runs in a vm context (as under jest).
const { max: mMax, min: mMin } = Math;

/** Planar float image at working resolution: R, G, B each `width * height` long, values 0..255. */
export interface PlanarRgb {
  width: number;
  height: number;
  r: Float32Array;
  g: Float32Array;
  b: Float32Array;
  /** Factor from working-resolution pixels to input pixels (input = working * scale). */
  scaleX: number;
  scaleY: number;
}

/** Binary mask, 1 byte per pixel (0 or 1), row-major. */
export interface Mask {
  width: number;
  height: number;
  data: Uint8Array;
}

export function assertRgbImage(img: RgbImage): void {
  const { width, height, channels, data } = img;
  if (channels !== 3) throw new Error(`expected 3 channels, got ${String(channels)}`);
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new Error(`invalid image size ${String(width)}x${String(height)}`);
  }
  if (data.length < width * height * 3) {
    throw new Error(`pixel buffer too short: ${data.length} < ${width * height * 3}`);
  }
}

/**
 * Reduce `img` so that its longer side is at most `maxSide` (never enlarged), averaging every input
 * pixel into the working pixel that covers it (box filter).
 */
export function downscaleToPlanar(img: RgbImage, maxSide: number): PlanarRgb {
  assertRgbImage(img);
  const { width: w, height: h } = img;
  // Plain Uint8Array view of this realm: indexing a Buffer created in another V8 context (e.g. by a
  // native addon under a test runner's vm sandbox) is far slower.
  const data = new Uint8Array(img.data.buffer, img.data.byteOffset, w * h * 3);
  const factor = mMax(1, mMax(w, h) / mMax(1, maxSide));
  const ow = mMax(1, Math.round(w / factor));
  const oh = mMax(1, Math.round(h / factor));
  const n = ow * oh;
  const r = new Float32Array(n);
  const g = new Float32Array(n);
  const b = new Float32Array(n);
  const count = new Float32Array(n);
  const xMap = new Int32Array(w);
  for (let x = 0; x < w; x++) xMap[x] = mMin(ow - 1, Math.floor((x * ow) / w));
  for (let y = 0; y < h; y++) {
    const oy = mMin(oh - 1, Math.floor((y * oh) / h));
    const rowOut = oy * ow;
    let p = y * w * 3;
    for (let x = 0; x < w; x++, p += 3) {
      const o = rowOut + xMap[x];
      r[o] += data[p];
      g[o] += data[p + 1];
      b[o] += data[p + 2];
      count[o] += 1;
    }
  }
  for (let i = 0; i < n; i++) {
    const c = count[i] || 1;
    r[i] /= c;
    g[i] /= c;
    b[i] /= c;
  }
  return { width: ow, height: oh, r, g, b, scaleX: w / ow, scaleY: h / oh };
}

export function emptyMask(width: number, height: number): Mask {
  return { width, height, data: new Uint8Array(width * height) };
}

export function countMask(mask: Mask): number {
  let n = 0;
  for (let i = 0; i < mask.data.length; i++) n += mask.data[i];
  return n;
}
