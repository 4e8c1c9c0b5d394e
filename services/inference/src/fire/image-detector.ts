/**
 * Built-in classical fire/smoke detector for still images: flame-colour pixels -> morphology ->
 * connected components -> merged boxes -> logistic score over region features; grey plumes ->
 * smoke boxes scored higher when they touch a flame region. Pure computation, no I/O.
 */
import type { RawDetection, RgbImage } from '../detection-types';
import type { GridBox } from './boxes';
import { boxArea, boxesNear, intersectionArea, mergeNearBoxes } from './boxes';
import type { FlameRuleOptions, SmokeRuleOptions, YCbCrPlanes } from './color';
import { DEFAULT_FLAME_RULES, DEFAULT_SMOKE_RULES, flameMask, smokeMask, toYCbCrPlanes } from './color';
import { labelComponents } from './components';
import { close, open } from './morphology';
import type { Mask, PlanarRgb } from './raster';
import { downscaleToPlanar } from './raster';
import type { FireFeatureVector, FireScoreModel } from './score';
import { DEFAULT_FIRE_SCORE_MODEL, logisticScore } from './score';

// Math functions bound once per module: looking globals up inside hot pixel loops is slow when the
// code runs in a vm context (as under jest).
const { abs: mAbs, max: mMax, min: mMin } = Math;

export interface FireSmokeOptions {
  /** Longest side of the working image (input is reduced by area averaging, never enlarged). */
  maxSide: number;
  flameRules: FlameRuleOptions;
  smokeRules: SmokeRuleOptions;
  /** Closing radius (working pixels) applied to the flame mask before labelling. */
  closeRadius: number;
  /** Components smaller than this many working pixels are dropped. */
  minFlamePixels: number;
  /** Boxes within this many working pixels of each other are merged. */
  mergeGap: number;
  fireScore: FireScoreModel;
  /** Smoke regions must cover at least this fraction of the image. */
  minSmokeFraction: number;
  /** Detections scoring below this are not returned (the scene lower bound is applied by the caller). */
  minScore: number;
  /** At most this many detections per label, best first. */
  maxDetections: number;
}

export const DEFAULT_FIRE_SMOKE_OPTIONS: FireSmokeOptions = {
  maxSide: 320,
  flameRules: DEFAULT_FLAME_RULES,
  smokeRules: DEFAULT_SMOKE_RULES,
  closeRadius: 1,
  minFlamePixels: 3,
  mergeGap: 2,
  fireScore: DEFAULT_FIRE_SCORE_MODEL,
  minSmokeFraction: 0.02,
  minScore: 0.05,
  maxDetections: 20,
};

export function resolveOptions(opts?: Partial<FireSmokeOptions>): FireSmokeOptions {
  return { ...DEFAULT_FIRE_SMOKE_OPTIONS, ...(opts ?? {}) };
}

/** A fire candidate region on the working grid with its features (exposed for evaluation/fitting). */
export interface FireCandidate {
  box: GridBox;
  flamePixels: number;
  features: FireFeatureVector;
  score: number;
}

export interface SmokeCandidate {
  box: GridBox;
  /** Score of the grey region on its own (before any flame-adjacency boost), at most 0.74. */
  base: number;
  score: number;
}

/** Fire regions must score at least this much to raise the score of smoke touching or above them. */
export const SMOKE_FIRE_SUPPORT_MIN = 0.6;

/**
 * Raises a smoke score by a quarter of the best supporting fire score (fire boxes scoring at least
 * SMOKE_FIRE_SUPPORT_MIN whose box, extended upwards by its own height, touches the smoke box).
 * Capped at 0.95.
 */
export function smokeScoreWithFire(
  box: GridBox,
  base: number,
  fire: { box: GridBox; score: number }[],
): number {
  let near = 0;
  for (const f of fire) {
    if (f.score < SMOKE_FIRE_SUPPORT_MIN) continue;
    const grown: GridBox = { ...f.box, minY: mMax(0, f.box.minY - (f.box.maxY - f.box.minY + 1)) };
    if (boxesNear(grown, box, 2) || intersectionArea(grown, box) > 0) near = mMax(near, f.score);
  }
  return near > 0 ? mMin(0.95, base + 0.25 * near) : base;
}

/** Everything the still-image pass computes; the video detector builds on it. */
export interface FrameAnalysis {
  img: PlanarRgb;
  planes: YCbCrPlanes;
  flame: Mask;
  fire: FireCandidate[];
  smoke: SmokeCandidate[];
}

function regionFeatures(
  box: GridBox,
  flame: Mask,
  img: PlanarRgb,
  planes: YCbCrPlanes,
): { n: number; f: number[] } {
  const w = flame.width;
  let n = 0;
  let crcb = 0;
  let yFlame = 0;
  let red = 0;
  let bright = 0;
  let sy = 0;
  let syy = 0;
  for (let y = box.minY; y <= box.maxY; y++) {
    for (let x = box.minX; x <= box.maxX; x++) {
      const i = y * w + x;
      const lum = planes.y[i];
      sy += lum;
      syy += lum * lum;
      if (lum > 220) bright++;
      if (flame.data[i]) {
        n++;
        crcb += planes.cr[i] - planes.cb[i];
        yFlame += lum;
        red += img.r[i];
      }
    }
  }
  const area = boxArea(box);
  const total = flame.width * flame.height;
  const meanY = sy / area;
  const std = Math.sqrt(mMax(0, syy / area - meanY * meanY));
  const nn = mMax(1, n);
  return {
    n,
    f: [
      Math.log10(area / total),
      n / area,
      crcb / nn / 100,
      bright / area,
      (yFlame / nn - planes.meanY) / 255,
      std / 64,
      red / nn / 255,
      planes.meanY / 255,
    ],
  };
}

function fireCandidates(
  img: PlanarRgb,
  planes: YCbCrPlanes,
  flame: Mask,
  o: FireSmokeOptions,
): FireCandidate[] {
  const closed = close(flame, o.closeRadius);
  const { components } = labelComponents(closed);
  const boxes = components.filter((c) => c.area >= o.minFlamePixels);
  const merged = mergeNearBoxes(boxes, o.mergeGap);
  const out: FireCandidate[] = [];
  for (const box of merged) {
    const { n, f } = regionFeatures(box, flame, img, planes);
    if (n === 0) continue;
    out.push({ box, flamePixels: n, features: f, score: logisticScore(o.fireScore, f) });
  }
  out.sort((a, b) => b.score - a.score);
  return out;
}

/** Mean absolute horizontal+vertical luma gradient over the mask pixels inside `box`. */
function meanGradient(box: GridBox, mask: Mask, planes: YCbCrPlanes): number {
  const w = mask.width;
  let s = 0;
  let n = 0;
  for (let y = box.minY; y < box.maxY; y++) {
    for (let x = box.minX; x < box.maxX; x++) {
      const i = y * w + x;
      if (!mask.data[i]) continue;
      s += mAbs(planes.y[i + 1] - planes.y[i]) + mAbs(planes.y[i + w] - planes.y[i]);
      n++;
    }
  }
  return n ? s / n : 0;
}

/**
 * Smoke on a still image: large grey (low-saturation, low-chroma) regions with soft texture. Without a
 * flame region touching or below it, a grey region stays below 0.75 (fog, overcast sky and grey walls
 * look alike); next to a confident flame region it can reach 0.95.
 */
function smokeCandidates(
  img: PlanarRgb,
  planes: YCbCrPlanes,
  fire: FireCandidate[],
  o: FireSmokeOptions,
): SmokeCandidate[] {
  const grey = close(open(smokeMask(img, o.smokeRules), 1), 2);
  const { components } = labelComponents(grey);
  const total = img.width * img.height;
  const out: SmokeCandidate[] = [];
  for (const c of components) {
    const frac = c.area / total;
    if (frac < o.minSmokeFraction) continue;
    const box: GridBox = { minX: c.minX, minY: c.minY, maxX: c.maxX, maxY: c.maxY };
    const fill = c.area / boxArea(box);
    const grad = meanGradient(box, grey, planes);
    // Soft texture: plumes have gentle luma gradients (about 2..14 grey levels per working pixel);
    // flat regions (sky, walls) are smoother, foliage and brickwork are rougher.
    const soft = grad >= 2 && grad <= 14 ? 1 : grad < 2 ? grad / 2 : mMax(0, 1 - (grad - 14) / 10);
    const base = mMin(0.74, 0.3 + 0.25 * mMin(1, frac / 0.15) + 0.1 * soft + 0.1 * mMin(1, fill / 0.6));
    out.push({ box, base, score: smokeScoreWithFire(box, base, fire) });
  }
  out.sort((a, b) => b.score - a.score);
  return out;
}

/** Runs the still-image pipeline and keeps the intermediate results. */
export function analyzeFrame(img: RgbImage, opts?: Partial<FireSmokeOptions>): FrameAnalysis {
  const o = resolveOptions(opts);
  const planar = downscaleToPlanar(img, o.maxSide);
  const planes = toYCbCrPlanes(planar);
  const flame = flameMask(planar, planes, o.flameRules);
  const fire = fireCandidates(planar, planes, flame, o);
  const smoke = smokeCandidates(planar, planes, fire, o);
  return { img: planar, planes, flame, fire, smoke };
}

/** Converts an inclusive working-grid box to input-image pixels. */
export function gridBoxToPixels(
  box: GridBox,
  img: PlanarRgb,
  width: number,
  height: number,
): RawDetection['box'] {
  return {
    x1: mMax(0, box.minX * img.scaleX),
    y1: mMax(0, box.minY * img.scaleY),
    x2: mMin(width, (box.maxX + 1) * img.scaleX),
    y2: mMin(height, (box.maxY + 1) * img.scaleY),
  };
}

export function toDetections(
  label: RawDetection['label'],
  items: { box: GridBox; score: number }[],
  img: PlanarRgb,
  width: number,
  height: number,
  o: FireSmokeOptions,
): RawDetection[] {
  return items
    .filter((c) => c.score >= o.minScore)
    .slice(0, o.maxDetections)
    .map((c) => ({ label, score: c.score, box: gridBoxToPixels(c.box, img, width, height) }));
}

/** Detects fire and smoke on one RGB image; boxes are in the input image's pixels. */
export function detectFireSmokeImage(img: RgbImage, opts?: Partial<FireSmokeOptions>): RawDetection[] {
  const o = resolveOptions(opts);
  const a = analyzeFrame(img, o);
  return [
    ...toDetections('fire', a.fire, a.img, img.width, img.height, o),
    ...toDetections('smoke', a.smoke, a.img, img.width, img.height, o),
  ];
}
