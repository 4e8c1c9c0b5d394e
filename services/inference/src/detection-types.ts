/**
 * Shared detection types used across the inference service (model decoders, rules, the built-in
 * fire/smoke detector, tracking). Boxes here are in pixel coordinates of the image they were
 * computed on; conversion to the public `cxcywh_normalized` form happens at the edge.
 */

/** Axis-aligned box in pixels: (x1, y1) top-left, (x2, y2) bottom-right, x2 >= x1, y2 >= y1. */
export interface PixelBox {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}

/** Output of the built-in fire/smoke detector (src/fire/). */
export interface RawDetection {
  label: 'fire' | 'smoke';
  score: number;
  box: PixelBox;
}

/** A detection with an arbitrary label (model class name or public scene label). */
export interface LabeledDetection {
  label: string;
  score: number;
  box: PixelBox;
}

/** Raw RGB (3 channels, interleaved, row-major) pixels of an image. */
export interface RgbImage {
  data: Buffer;
  width: number;
  height: number;
  channels: 3;
}
