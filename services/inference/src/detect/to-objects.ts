import type { DetectedObject } from '@vision/shared';
import { toNormalizedBBox } from '../bbox';
import type { LabeledDetection } from '../detection-types';

const round4 = (v: number) => Math.round(v * 1e4) / 1e4;

/** Pixel detections of an image of `width` x `height` -> public objects (no track ids). */
export function toObjects(
  dets: readonly LabeledDetection[],
  width: number,
  height: number,
): DetectedObject[] {
  return dets.map((d) => ({
    label: d.label,
    score: round4(d.score),
    bbox: toNormalizedBBox(d.box, width, height),
  }));
}
