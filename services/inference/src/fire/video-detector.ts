/**
 * Fire/smoke on video: the still-image pass on every frame plus temporal cues.
 * - Flicker: flames change shape from frame to frame, so the flame mask inside a fire region toggles;
 *   a region that stays perfectly still over the recent frames (a lamp, a painted wall) is scored
 *   down, a flickering or growing one up.
 * - Smoke: grey (low-saturation) pixels that differ from a running-average background and soften the
 *   background's edges (smoke is semi-transparent) form moving smoke regions.
 * Pure computation, no I/O; one instance per stream (state: recent masks and the background).
 */
import type { RawDetection, RgbImage } from '../detection-types';
import type { GridBox } from './boxes';
import { boxArea, intersectionArea } from './boxes';
import { isSmokePixel } from './color';
import { labelComponents } from './components';
import type { FireSmokeOptions, FrameAnalysis } from './image-detector';
import { analyzeFrame, resolveOptions, smokeScoreWithFire, toDetections } from './image-detector';
import { close, open } from './morphology';
import type { Mask } from './raster';
import { emptyMask } from './raster';

// Math functions bound once per module: looking globals up inside hot pixel loops is slow when the
// code runs in a vm context (as under jest).
const { abs: mAbs, max: mMax, min: mMin } = Math;

export interface FireSmokeVideoOptions extends FireSmokeOptions {
  /** Number of recent flame masks kept for the flicker measure. */
  historyFrames: number;
  /** Weight of the newest frame in the running background (0..1). */
  backgroundAlpha: number;
  /** Minimum |luma - background| for a pixel to count as changed. */
  motionThreshold: number;
  /** Moving smoke regions must cover at least this fraction of the frame. */
  minMovingSmokeFraction: number;
  /** A still-image smoke region with fewer changed pixels than this fraction is scaled by 0.7. */
  staticSmokeChange: number;
}

export const DEFAULT_FIRE_SMOKE_VIDEO_OPTIONS: FireSmokeVideoOptions = {
  ...resolveOptions(),
  historyFrames: 8,
  backgroundAlpha: 0.08,
  motionThreshold: 10,
  minMovingSmokeFraction: 0.01,
  staticSmokeChange: 0.1,
};

/** Fraction of flame-mask toggles between consecutive history frames inside `box`, per flame pixel. */
export function flickerInBox(history: Mask[], box: GridBox): number {
  if (history.length < 2) return 0;
  const w = history[0].width;
  let toggles = 0;
  let flame = 0;
  for (let y = box.minY; y <= box.maxY; y++) {
    for (let x = box.minX; x <= box.maxX; x++) {
      const i = y * w + x;
      for (let k = 1; k < history.length; k++) {
        if (history[k].data[i] !== history[k - 1].data[i]) toggles++;
        flame += history[k].data[i];
      }
    }
  }
  return flame ? toggles / flame : 0;
}

function flameCountInBox(mask: Mask, box: GridBox): number {
  let n = 0;
  for (let y = box.minY; y <= box.maxY; y++) {
    for (let x = box.minX; x <= box.maxX; x++) n += mask.data[y * mask.width + x];
  }
  return n;
}

/**
 * Temporal adjustment of a still fire score: x0.8 for a region that never flickers once enough frames
 * are seen, up to x1.25 for strong flicker (>= 0.3 toggles per flame pixel per frame), +0.05 when the
 * region's flame area grew by a quarter over the history. Result stays in [0, 0.99].
 */
export function temporalFireScore(still: number, flicker: number, growth: number, frames: number): number {
  if (frames < 3) return still;
  const f = mMin(1, flicker / 0.3);
  let s = still * (0.8 + 0.45 * f);
  if (growth >= 0.25) s += 0.05;
  return mMax(0, mMin(0.99, s));
}

export class FireSmokeVideoDetector {
  private readonly o: FireSmokeVideoOptions;
  private history: Mask[] = [];
  private background: Float32Array | null = null;
  private gridW = 0;
  private gridH = 0;
  private frames = 0;
  private lastTimeMs = -Infinity;

  constructor(opts?: Partial<FireSmokeVideoOptions>) {
    this.o = { ...DEFAULT_FIRE_SMOKE_VIDEO_OPTIONS, ...(opts ?? {}) };
  }

  /** Feeds one frame (RGB, any size; a size change resets the temporal state) and returns its detections. */
  push(img: RgbImage, timeMs: number): RawDetection[] {
    if (!Number.isFinite(timeMs)) throw new Error('timeMs must be a finite number');
    const a = analyzeFrame(img, this.o);
    if (a.img.width !== this.gridW || a.img.height !== this.gridH || timeMs < this.lastTimeMs) this.reset(a);
    this.lastTimeMs = timeMs;
    this.frames++;
    this.history.push(a.flame);
    if (this.history.length > this.o.historyFrames) this.history.shift();

    const fire = a.fire.map((c) => {
      const flicker = flickerInBox(this.history, c.box);
      const before = flameCountInBox(this.history[0], c.box);
      const growth = before > 0 ? (c.flamePixels - before) / before : 0;
      return { box: c.box, score: temporalFireScore(c.score, flicker, growth, this.history.length) };
    });
    fire.sort((x, y) => y.score - x.score);

    const moving = this.movingSmoke(a, fire);
    this.updateBackground(a);
    // A grey region in which (almost) nothing changes over the recent frames is a wall, floor or sky,
    // not drifting smoke: its own score is scaled down once the background has settled.
    const still = a.smoke.map((c) => {
      const changed = this.changedFraction(a, c.box);
      const base = this.frames >= 3 && changed < this.o.staticSmokeChange ? c.base * 0.7 : c.base;
      return { box: c.box, score: smokeScoreWithFire(c.box, base, fire) };
    });
    const smoke = mergeSmoke([...still, ...moving]);
    return [
      ...toDetections('fire', fire, a.img, img.width, img.height, this.o),
      ...toDetections('smoke', smoke, a.img, img.width, img.height, this.o),
    ];
  }

  /** Fraction of pixels in `box` whose luma differs from the background by the motion threshold. */
  private changedFraction(a: FrameAnalysis, box: GridBox): number {
    const bg = this.background;
    if (!bg) return 0;
    const w = a.img.width;
    let n = 0;
    for (let y = box.minY; y <= box.maxY; y++) {
      for (let x = box.minX; x <= box.maxX; x++) {
        const i = y * w + x;
        if (mAbs(a.planes.y[i] - bg[i]) >= this.o.motionThreshold) n++;
      }
    }
    return n / boxArea(box);
  }

  private reset(a: FrameAnalysis): void {
    this.gridW = a.img.width;
    this.gridH = a.img.height;
    this.history = [];
    this.background = Float32Array.from(a.planes.y);
    this.frames = 0;
  }

  private updateBackground(a: FrameAnalysis): void {
    const bg = this.background;
    if (!bg) return;
    const al = this.o.backgroundAlpha;
    for (let i = 0; i < bg.length; i++) bg[i] = (1 - al) * bg[i] + al * a.planes.y[i];
  }

  private movingSmoke(
    a: FrameAnalysis,
    fire: { box: GridBox; score: number }[],
  ): { box: GridBox; score: number }[] {
    const bg = this.background;
    if (!bg || this.frames < 3) return [];
    const { width: w, height: h } = a.img;
    const mask = emptyMask(w, h);
    for (let i = 0; i < w * h; i++) {
      if (mAbs(a.planes.y[i] - bg[i]) < this.o.motionThreshold) continue;
      mask.data[i] = isSmokePixel(a.img.r[i], a.img.g[i], a.img.b[i], this.o.smokeRules) ? 1 : 0;
    }
    const cleaned = close(open(mask, 1), 2);
    const { components } = labelComponents(cleaned);
    const out: { box: GridBox; score: number }[] = [];
    for (const c of components) {
      const frac = c.area / (w * h);
      if (frac < this.o.minMovingSmokeFraction) continue;
      const box: GridBox = { minX: c.minX, minY: c.minY, maxX: c.maxX, maxY: c.maxY };
      // Smoke is semi-transparent: it softens the edges behind it. Objects (people, cars) add edges.
      const ratio = edgeEnergy(a.planes.y, w, box) / mMax(1e-3, edgeEnergy(bg, w, box));
      let s = 0.3 + 0.25 * mMin(1, frac / 0.1) + 0.1 * mMin(1, c.area / boxArea(box) / 0.6);
      if (ratio < 0.9) s += 0.1;
      if (ratio > 1.1) s -= 0.15;
      s = mMax(0, mMin(s, 0.7));
      out.push({ box, score: smokeScoreWithFire(box, s, fire) });
    }
    return out;
  }
}

function edgeEnergy(lum: Float32Array, w: number, box: GridBox): number {
  let s = 0;
  let n = 0;
  for (let y = box.minY; y < box.maxY; y++) {
    for (let x = box.minX; x < box.maxX; x++) {
      const i = y * w + x;
      s += mAbs(lum[i + 1] - lum[i]) + mAbs(lum[i + w] - lum[i]);
      n++;
    }
  }
  return n ? s / n : 0;
}

/** Keeps the better of two smoke boxes that overlap by more than half of the smaller one. */
function mergeSmoke(items: { box: GridBox; score: number }[]): { box: GridBox; score: number }[] {
  const sorted = [...items].sort((a, b) => b.score - a.score);
  const kept: { box: GridBox; score: number }[] = [];
  for (const it of sorted) {
    const dup = kept.some(
      (k) => intersectionArea(k.box, it.box) > 0.5 * mMin(boxArea(k.box), boxArea(it.box)),
    );
    if (!dup) kept.push(it);
  }
  return kept;
}
