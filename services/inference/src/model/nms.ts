import type { PixelBox } from '../detection-types';

/** A model detection in pixels, with its class index. */
export interface ClassDetection {
  classIndex: number;
  score: number;
  box: PixelBox;
}

export function area(b: PixelBox): number {
  return Math.max(0, b.x2 - b.x1) * Math.max(0, b.y2 - b.y1);
}

export function intersection(a: PixelBox, b: PixelBox): number {
  const w = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1);
  const h = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1);
  return w > 0 && h > 0 ? w * h : 0;
}

export function iou(a: PixelBox, b: PixelBox): number {
  const inter = intersection(a, b);
  if (inter === 0) return 0;
  return inter / (area(a) + area(b) - inter);
}

/**
 * Class-aware greedy non-maximum suppression: within each class, keeps the highest-scoring box and
 * drops others overlapping it with IoU > `iouThreshold`. Output is sorted by descending score.
 */
export function nmsClassAware<T extends ClassDetection>(dets: readonly T[], iouThreshold: number): T[] {
  const sorted = [...dets].sort((a, b) => b.score - a.score);
  const kept: T[] = [];
  const suppressed = new Uint8Array(sorted.length);
  for (let i = 0; i < sorted.length; i++) {
    if (suppressed[i]) continue;
    const d = sorted[i];
    kept.push(d);
    for (let j = i + 1; j < sorted.length; j++) {
      if (!suppressed[j] && sorted[j].classIndex === d.classIndex && iou(d.box, sorted[j].box) > iouThreshold)
        suppressed[j] = 1;
    }
  }
  return kept;
}
