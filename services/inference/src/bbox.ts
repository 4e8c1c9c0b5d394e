import type { BBox } from '@vision/shared';
import type { PixelBox } from './detection-types';

const clamp01 = (v: number) => (v < 0 ? 0 : v > 1 ? 1 : v);

/** Clamps a pixel box to the image. */
export function clampBox(b: PixelBox, width: number, height: number): PixelBox {
  return {
    x1: Math.min(Math.max(b.x1, 0), width),
    y1: Math.min(Math.max(b.y1, 0), height),
    x2: Math.min(Math.max(b.x2, 0), width),
    y2: Math.min(Math.max(b.y2, 0), height),
  };
}

/** Scales a box from letterboxed model pixels back to original-image pixels (padding is bottom/right). */
export function unletterbox(b: PixelBox, r: number): PixelBox {
  return { x1: b.x1 / r, y1: b.y1 / r, x2: b.x2 / r, y2: b.y2 / r };
}

const round6 = (v: number) => Math.round(v * 1e6) / 1e6;

/** Pixel box -> public `cxcywh_normalized` box, clamped to the image so every value lies in [0, 1]. */
export function toNormalizedBBox(b: PixelBox, width: number, height: number): BBox {
  const x1 = clamp01(b.x1 / width);
  const x2 = clamp01(b.x2 / width);
  const y1 = clamp01(b.y1 / height);
  const y2 = clamp01(b.y2 / height);
  const w = Math.max(0, x2 - x1);
  const h = Math.max(0, y2 - y1);
  return {
    format: 'cxcywh_normalized',
    cx: clamp01(round6(x1 + w / 2)),
    cy: clamp01(round6(y1 + h / 2)),
    width: clamp01(round6(w)),
    height: clamp01(round6(h)),
  };
}

export function unionBox(a: PixelBox, b: PixelBox): PixelBox {
  return {
    x1: Math.min(a.x1, b.x1),
    y1: Math.min(a.y1, b.y1),
    x2: Math.max(a.x2, b.x2),
    y2: Math.max(a.y2, b.y2),
  };
}
