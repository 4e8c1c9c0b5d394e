/**
 * The picture of an event (docs/EVIDENCE.md): a frame of the ring as JPEG with a box or a polygon
 * drawn on it, and the crop of a region of the clean frame. The drawing is done on the pixels (lines 3 px wide),
 * so the same frame and the same drawing always give the same bytes.
 */
import sharp from 'sharp';
import type { RingFrame } from './frame-ring';
import { interleaveGbr, JPEG_OPTIONS } from './latest-still';

type Pt = readonly [number, number];

/** What to draw, in normalized coordinates of the frame (x right, y down): a box, or a polygon. */
export type Drawing = { box: readonly [number, number, number, number] } | { polygon: readonly Pt[] };

export interface Picture {
  jpeg: Buffer;
  crop: Buffer;
  width: number;
  height: number;
}

/** The colour and width of what is drawn. */
const INK = [255, 32, 32] as const;
const HALF_WIDTH = 1;

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/** The drawing's bounding box in pixels, inside the frame and at least 2 x 2 pixels. */
export function cropRegion(
  d: Drawing,
  width: number,
  height: number,
): { left: number; top: number; width: number; height: number } {
  const pts: Pt[] =
    'box' in d
      ? [
          [d.box[0], d.box[1]],
          [d.box[2], d.box[3]],
        ]
      : [...d.polygon];
  const xs = pts.map((p) => p[0] * width);
  const ys = pts.map((p) => p[1] * height);
  const left = clamp(Math.floor(Math.min(...xs)), 0, width - 2);
  const top = clamp(Math.floor(Math.min(...ys)), 0, height - 2);
  const right = clamp(Math.ceil(Math.max(...xs)), left + 2, width);
  const bottom = clamp(Math.ceil(Math.max(...ys)), top + 2, height);
  return { left, top, width: right - left, height: bottom - top };
}

function dot(rgb: Buffer, w: number, h: number, x: number, y: number): void {
  for (let dy = -HALF_WIDTH; dy <= HALF_WIDTH; dy++)
    for (let dx = -HALF_WIDTH; dx <= HALF_WIDTH; dx++) {
      const px = x + dx;
      const py = y + dy;
      if (px < 0 || py < 0 || px >= w || py >= h) continue;
      const o = (py * w + px) * 3;
      rgb[o] = INK[0];
      rgb[o + 1] = INK[1];
      rgb[o + 2] = INK[2];
    }
}

/** A segment between two pixel points (Bresenham), HALF_WIDTH * 2 + 1 pixels wide. */
function segment(rgb: Buffer, w: number, h: number, a: Pt, b: Pt): void {
  let [x0, y0] = [Math.round(a[0]), Math.round(a[1])];
  const [x1, y1] = [Math.round(b[0]), Math.round(b[1])];
  const dx = Math.abs(x1 - x0);
  const dy = -Math.abs(y1 - y0);
  const sx = x0 < x1 ? 1 : -1;
  const sy = y0 < y1 ? 1 : -1;
  let err = dx + dy;
  for (;;) {
    dot(rgb, w, h, x0, y0);
    if (x0 === x1 && y0 === y1) return;
    const e2 = 2 * err;
    if (e2 >= dy) {
      err += dy;
      x0 += sx;
    }
    if (e2 <= dx) {
      err += dx;
      y0 += sy;
    }
  }
}

/** Draws the box or the closed polygon on an interleaved RGB image of w x h pixels. */
export function draw(rgb: Buffer, w: number, h: number, d: Drawing): void {
  const px = (p: Pt): Pt => [clamp(p[0] * w, 0, w - 1), clamp(p[1] * h, 0, h - 1)];
  const pts: Pt[] =
    'box' in d
      ? [
          [d.box[0], d.box[1]],
          [d.box[2], d.box[1]],
          [d.box[2], d.box[3]],
          [d.box[0], d.box[3]],
        ]
      : [...d.polygon];
  for (let i = 0; i < pts.length; i++) segment(rgb, w, h, px(pts[i]), px(pts[(i + 1) % pts.length]));
}

/** The frame with the drawing, and the crop of the drawing's bounding box from the clean frame. */
export async function renderPicture(frame: RingFrame, d: Drawing): Promise<Picture> {
  const { width, height } = frame;
  const rgb = interleaveGbr(frame.planes, width * height, width, width, height);
  const raw = { raw: { width, height, channels: 3 as const } };
  const crop = await sharp(rgb, raw)
    .extract(cropRegion(d, width, height))
    .jpeg(JPEG_OPTIONS)
    .toBuffer();
  draw(rgb, width, height, d);
  const jpeg = await sharp(rgb, raw).jpeg(JPEG_OPTIONS).toBuffer();
  return { jpeg, crop, width, height };
}
