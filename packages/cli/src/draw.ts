import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import type { DetectedObject } from '@vision/sdk';

/** Box colours, picked per label so one label keeps its colour across images. */
export const PALETTE = [
  '#ff3b30',
  '#34c759',
  '#007aff',
  '#ff9500',
  '#af52de',
  '#00c7be',
  '#ffcc00',
  '#ff2d55',
];

export function colorFor(label: string): string {
  let h = 0;
  for (const ch of label) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return PALETTE[h % PALETTE.length];
}

/** Pixel rectangle of a normalised centre-point box (SPEC.md 2.4) on a width × height image. */
export function boxPixels(bbox: DetectedObject['bbox'], width: number, height: number) {
  const x0 = Math.round((bbox.cx - bbox.width / 2) * width);
  const y0 = Math.round((bbox.cy - bbox.height / 2) * height);
  const x1 = Math.round((bbox.cx + bbox.width / 2) * width);
  const y1 = Math.round((bbox.cy + bbox.height / 2) * height);
  const clamp = (v: number, max: number) => Math.min(Math.max(v, 0), max);
  return {
    x0: clamp(x0, width - 1),
    y0: clamp(y0, height - 1),
    x1: clamp(x1, width - 1),
    y1: clamp(y1, height - 1),
  };
}

/** Stroke width of the boxes drawn on a width × height image. */
export function strokeWidth(width: number, height: number): number {
  return Math.max(2, Math.round(Math.min(width, height) / 250));
}

const escapeXml = (s: string) =>
  s.replace(
    /[<>&"']/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] ?? c,
  );

/**
 * Writes a copy of `input` into `outDir` (same name and format) with each object's box outlined and
 * labelled (`label score`). Returns the path written.
 */
export async function drawDetections(
  input: string,
  objects: DetectedObject[],
  outDir: string,
  name?: string,
) {
  const image = sharp(input);
  const { width, height } = await image.metadata();
  if (!width || !height) throw new Error(`${input}: cannot read the image size`);
  const stroke = strokeWidth(width, height);
  const font = Math.max(12, Math.round(Math.min(width, height) / 40));
  const shapes = objects.map((o) => {
    const { x0, y0, x1, y1 } = boxPixels(o.bbox, width, height);
    const color = colorFor(o.label);
    const text = `${o.label} ${o.score.toFixed(2)}`;
    const textWidth = Math.round(text.length * font * 0.62) + 8;
    const labelY = y0 - font - 6 >= 0 ? y0 - font - 6 : y0;
    return (
      `<rect x="${x0}" y="${y0}" width="${Math.max(1, x1 - x0)}" height="${Math.max(1, y1 - y0)}" ` +
      `fill="none" stroke="${color}" stroke-width="${stroke}"/>` +
      `<rect x="${x0}" y="${labelY}" width="${textWidth}" height="${font + 6}" fill="${color}"/>` +
      `<text x="${x0 + 4}" y="${labelY + font}" font-family="sans-serif" font-size="${font}" fill="#ffffff">` +
      `${escapeXml(text)}</text>`
    );
  });
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${shapes.join('')}</svg>`;
  await mkdir(outDir, { recursive: true });
  const out = path.join(outDir, name ?? path.basename(input));
  const composed = image.composite([{ input: Buffer.from(svg), top: 0, left: 0 }]);
  // Full-resolution colour in JPEG copies, so that thin box lines keep their colour.
  if (/\.jpe?g$/i.test(out)) composed.jpeg({ quality: 92, chromaSubsampling: '4:4:4' });
  await composed.toFile(out);
  return out;
}
