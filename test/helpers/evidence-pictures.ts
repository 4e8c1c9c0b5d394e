/**
 * Checks on the pictures of events (docs/EVIDENCE.md): a picture is read as RGB, its drawing is found
 * on the event's track box, and its crop is compared with the clip's frame that ffmpeg decodes at the event's media
 * time, by a simple image distance.
 */
import { execFileSync } from 'node:child_process';
import sharp from 'sharp';

export type EvidenceEvent = Record<string, unknown> & {
  id: string;
  kind: string;
  seq: number;
  media_ms: number;
};
export interface EvidenceObject {
  label: string;
  track_id?: string;
  bbox: { cx: number; cy: number; width: number; height: number };
  best_shot_path?: string;
}
export interface EvidenceFrame {
  frame_id: string;
  frame_time_ms: number;
  objects: EvidenceObject[];
}
export interface Raw {
  data: Buffer;
  width: number;
  height: number;
}
export interface PixelBox {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}

export const rgb = async (jpeg: Buffer): Promise<Raw> => {
  const { data, info } = await sharp(jpeg).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
};

/** The clip's frame at `ms`, scaled to width x height as inference scales it (bilinear), RGB; none past its end. */
export function decodeAt(clip: string, ms: number, width: number, height: number): Raw | undefined {
  const data = execFileSync(
    'ffmpeg',
    ['-v', 'error', '-ss', (ms / 1000).toFixed(3), '-i', clip, '-frames:v', '1', '-vf'].concat([
      `scale=${width}:${height}:flags=bilinear`,
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      'pipe:1',
    ]),
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return data.length === width * height * 3 ? { data, width, height } : undefined;
}

/** Mean absolute difference of a region of `a` (x, y, w, h in a's pixels) and all of `b` (w x h). */
export function distance(a: Raw, r: { x: number; y: number; w: number; h: number }, b: Raw): number {
  let sum = 0;
  for (let y = 0; y < r.h; y++)
    for (let x = 0; x < r.w; x++)
      for (let c = 0; c < 3; c++)
        sum += Math.abs(a.data[((r.y + y) * a.width + r.x + x) * 3 + c] - b.data[(y * b.width + x) * 3 + c]);
  return sum / (r.w * r.h * 3);
}

/**
 * A pixel of the drawing's red (255, 32, 32) after JPEG. Tight enough that the camera clip's own reddish pixels
 * (up to ~230 a frame with R > 150, G and B < 110) are not taken for it.
 */
const isInk = (p: Raw, x: number, y: number) => {
  const o = (y * p.width + x) * 3;
  const [r, g, b] = [p.data[o], p.data[o + 1], p.data[o + 2]];
  return r > 180 && g < 90 && b < 90 && r - g > 120;
};

/** The box of `o` in pixels of `pic`. */
export function pixelBox(o: EvidenceObject, pic: Raw): PixelBox {
  const px = (v: number, n: number) => Math.min(n - 1, Math.max(0, Math.round(v * n)));
  return {
    x1: px(o.bbox.cx - o.bbox.width / 2, pic.width),
    x2: px(o.bbox.cx + o.bbox.width / 2, pic.width),
    y1: px(o.bbox.cy - o.bbox.height / 2, pic.height),
    y2: px(o.bbox.cy + o.bbox.height / 2, pic.height),
  };
}

/** The drawing lies on the box: its edges are inked, and the ink is on its edges. */
export function expectBoxDrawn(pic: Raw, b: PixelBox): void {
  const { x1, y1, x2, y2 } = b;
  const edge: boolean[] = [];
  for (let x = x1 + 3; x <= x2 - 3; x += 2) edge.push(isInk(pic, x, y1), isInk(pic, x, y2));
  for (let y = y1 + 3; y <= y2 - 3; y += 2) edge.push(isInk(pic, x1, y), isInk(pic, x2, y));
  expect(edge.filter(Boolean).length / edge.length).toBeGreaterThan(0.9);
  let ink = 0;
  let near = 0;
  for (let y = 0; y < pic.height; y++)
    for (let x = 0; x < pic.width; x++) {
      if (!isInk(pic, x, y)) continue;
      ink++;
      const onV = (Math.abs(x - x1) <= 3 || Math.abs(x - x2) <= 3) && y >= y1 - 3 && y <= y2 + 3;
      const onH = (Math.abs(y - y1) <= 3 || Math.abs(y - y2) <= 3) && x >= x1 - 3 && x <= x2 + 3;
      if (onV || onH) near++;
    }
  expect(near / ink).toBeGreaterThan(0.9);
}

/**
 * The crop is the clean box `b` of a picture of width x height, and it is the clip's frame at `mediaMs`: near the
 * frame ffmpeg decodes there, and nearer to it than to the frames 1.5 s before and after.
 */
export async function expectCropOfFrameAt(
  clip: string,
  mediaMs: number,
  pic: { width: number; height: number },
  b: PixelBox,
  cropJpeg: Buffer,
): Promise<void> {
  const crop = await rgb(cropJpeg);
  expect(Math.abs(crop.width - (b.x2 - b.x1))).toBeLessThanOrEqual(2);
  expect(Math.abs(crop.height - (b.y2 - b.y1))).toBeLessThanOrEqual(2);
  const region = { x: b.x1, y: b.y1, w: crop.width, h: crop.height };
  const at = distance(decodeAt(clip, mediaMs, pic.width, pic.height)!, region, crop);
  const others = [mediaMs - 1500, mediaMs + 1500]
    .filter((ms) => ms >= 0)
    .flatMap((ms) => decodeAt(clip, ms, pic.width, pic.height) ?? [])
    .map((f) => distance(f, region, crop));
  expect(others.length).toBeGreaterThan(0);
  expect(at).toBeLessThan(12);
  expect(at).toBeLessThan(Math.min(...others));
}

/** Mean absolute difference of two pictures of one size, but for the pixels within 4 px of the box's edges (the ink). */
function distanceOffInk(a: Raw, b: Raw, box: PixelBox): number {
  const near = (v: number, e: number) => Math.abs(v - e) <= 4;
  let sum = 0;
  let n = 0;
  for (let y = 0; y < a.height; y++)
    for (let x = 0; x < a.width; x++) {
      const inY = y >= box.y1 - 4 && y <= box.y2 + 4;
      const inX = x >= box.x1 - 4 && x <= box.x2 + 4;
      if ((inY && (near(x, box.x1) || near(x, box.x2))) || (inX && (near(y, box.y1) || near(y, box.y2))))
        continue;
      const o = (y * a.width + x) * 3;
      for (let c = 0; c < 3; c++) sum += Math.abs(a.data[o + c] - b.data[o + c]);
      n += 3;
    }
  return sum / n;
}

/**
 * The whole picture (its ink aside) is the clip's frame at `mediaMs`: near the frame ffmpeg decodes there, and
 * nearer to it than to the frames 1.5 s before and after. For small boxes, whose crops are mostly JPEG's noise.
 */
export function expectPictureOfFrameAt(clip: string, mediaMs: number, pic: Raw, box: PixelBox): void {
  const at = distanceOffInk(decodeAt(clip, mediaMs, pic.width, pic.height)!, pic, box);
  const others = [mediaMs - 1500, mediaMs + 1500]
    .filter((ms) => ms >= 0)
    .flatMap((ms) => decodeAt(clip, ms, pic.width, pic.height) ?? [])
    .map((f) => distanceOffInk(f, pic, box));
  expect(others.length).toBeGreaterThan(0);
  expect(at).toBeLessThan(4.5);
  expect(at).toBeLessThan(Math.min(...others));
}
