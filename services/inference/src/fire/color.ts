/**
 * Pixel colour models.
 *
 * Flame pixels follow the YCbCr rules of Celik & Demirel (2009), "Fire detection in video sequences
 * using a generic color model" (Fire Safety Journal 44): Y > Cb, Cr > Cb, Y > mean(Y), Cb < mean(Cb),
 * Cr > mean(Cr) and |Cb - Cr| >= tau, combined with the RGB rule R > R_T and R >= G > B.
 * Smoke pixels are grey: low saturation, low chroma, neither very dark nor blown out.
 */
import type { Mask, PlanarRgb } from './raster';
import { emptyMask } from './raster';

// Math functions bound once per module: looking globals up inside hot pixel loops is slow when the
// code runs in a vm context (as under jest).
const { abs: mAbs, max: mMax, min: mMin } = Math;

export interface YCbCr {
  y: number;
  cb: number;
  cr: number;
}

/** ITU-R BT.601 full-range RGB -> YCbCr (0..255). */
export function rgbToYCbCr(r: number, g: number, b: number): YCbCr {
  return {
    y: 0.299 * r + 0.587 * g + 0.114 * b,
    cb: 128 - 0.168736 * r - 0.331264 * g + 0.5 * b,
    cr: 128 + 0.5 * r - 0.418688 * g - 0.081312 * b,
  };
}

/** Planar YCbCr of a working image plus its per-channel means. */
export interface YCbCrPlanes {
  width: number;
  height: number;
  y: Float32Array;
  cb: Float32Array;
  cr: Float32Array;
  meanY: number;
  meanCb: number;
  meanCr: number;
}

export function toYCbCrPlanes(img: PlanarRgb): YCbCrPlanes {
  const n = img.width * img.height;
  const y = new Float32Array(n);
  const cb = new Float32Array(n);
  const cr = new Float32Array(n);
  let sy = 0;
  let scb = 0;
  let scr = 0;
  for (let i = 0; i < n; i++) {
    const c = rgbToYCbCr(img.r[i], img.g[i], img.b[i]);
    y[i] = c.y;
    cb[i] = c.cb;
    cr[i] = c.cr;
    sy += c.y;
    scb += c.cb;
    scr += c.cr;
  }
  return { width: img.width, height: img.height, y, cb, cr, meanY: sy / n, meanCb: scb / n, meanCr: scr / n };
}

export interface FlameRuleOptions {
  /** Minimum |Cb - Cr| (Celik & Demirel's tau). */
  tau: number;
  /** Minimum red value R_T. */
  redMin: number;
  /**
   * Glow rule for small, partly saturated flames on dark (night) frames, whose whitish cores fail the
   * |Cb-Cr| rule: R > redMin, R >= G >= B, R - B >= glowWarmth and Y >= mean(Y) + glowContrast.
   * Set glowContrast to Infinity to disable.
   */
  glowContrast: number;
  glowWarmth: number;
}

export const DEFAULT_FLAME_RULES: FlameRuleOptions = {
  tau: 40,
  redMin: 150,
  glowContrast: 90,
  glowWarmth: 40,
};

export interface PixelStats {
  meanY: number;
  meanCb: number;
  meanCr: number;
}

/** Margin (grey levels) on the comparisons with image means, so rounding never decides them. */
const MEAN_MARGIN = 0.5;

/** The flame-pixel rule for one pixel given the image means. */
export function isFlamePixel(
  r: number,
  g: number,
  b: number,
  stats: PixelStats,
  opts: FlameRuleOptions = DEFAULT_FLAME_RULES,
): boolean {
  if (!(r > opts.redMin && r >= g && g >= b)) return false;
  const { y, cb, cr } = rgbToYCbCr(r, g, b);
  if (r - b >= opts.glowWarmth && y >= stats.meanY + opts.glowContrast) return true;
  if (g === b) return false;
  return (
    y > cb &&
    cr > cb &&
    y > stats.meanY + MEAN_MARGIN &&
    cb < stats.meanCb - MEAN_MARGIN &&
    cr > stats.meanCr + MEAN_MARGIN &&
    mAbs(cb - cr) >= opts.tau
  );
}

export function flameMask(
  img: PlanarRgb,
  planes: YCbCrPlanes,
  opts: FlameRuleOptions = DEFAULT_FLAME_RULES,
): Mask {
  const mask = emptyMask(img.width, img.height);
  const stats = { meanY: planes.meanY, meanCb: planes.meanCb, meanCr: planes.meanCr };
  for (let i = 0; i < mask.data.length; i++) {
    mask.data[i] = isFlamePixel(img.r[i], img.g[i], img.b[i], stats, opts) ? 1 : 0;
  }
  return mask;
}

export interface SmokeRuleOptions {
  /** Maximum HSV saturation (max-min)/max, 0..1. */
  satMax: number;
  /** Luma range. */
  yMin: number;
  yMax: number;
  /** Maximum |Cb-128| and |Cr-128|. */
  chromaMax: number;
  /** Maximum Cb - 128: bluish pixels (clear sky, water) are not smoke. */
  blueMax: number;
}

export const DEFAULT_SMOKE_RULES: SmokeRuleOptions = {
  satMax: 0.22,
  yMin: 70,
  yMax: 235,
  chromaMax: 16,
  blueMax: 6,
};

export function isSmokePixel(
  r: number,
  g: number,
  b: number,
  opts: SmokeRuleOptions = DEFAULT_SMOKE_RULES,
): boolean {
  const max = mMax(r, g, b);
  const min = mMin(r, g, b);
  if (max <= 0 || (max - min) / max > opts.satMax) return false;
  const { y, cb, cr } = rgbToYCbCr(r, g, b);
  if (y < opts.yMin || y > opts.yMax) return false;
  if (mAbs(cb - 128) > opts.chromaMax || mAbs(cr - 128) > opts.chromaMax) return false;
  return cb - 128 <= opts.blueMax;
}

export function smokeMask(img: PlanarRgb, opts: SmokeRuleOptions = DEFAULT_SMOKE_RULES): Mask {
  const mask = emptyMask(img.width, img.height);
  for (let i = 0; i < mask.data.length; i++) {
    mask.data[i] = isSmokePixel(img.r[i], img.g[i], img.b[i], opts) ? 1 : 0;
  }
  return mask;
}
