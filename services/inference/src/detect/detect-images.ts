import sharp, { type Metadata } from 'sharp';
import type { DetectedObject } from '@vision/shared';
import { ImageDecodeError, prepareImage } from '../model/preprocess';
import type { PixelBudget } from './pixel-budget';
import type { SceneEngine } from '../scenes/engines';
import { toObjects } from './to-objects';

export type ImageInput = { ok: true; data: Buffer } | { ok: false; reason: string };

export type ImageResult =
  | { seq: number; status: 'succeeded'; image: { width: number; height: number }; objects: DetectedObject[] }
  | { seq: number; status: 'failed'; reason: string };

/** The image's header (no decoding), undefined when there is no readable header. */
async function header(data: Buffer): Promise<Metadata | undefined> {
  return sharp(data, { limitInputPixels: false })
    .metadata()
    .catch(() => undefined);
}

/**
 * Detects every image of a batch with one scene engine, in input order. A failing image yields a
 * `failed` entry and never fails the others. With a budget, each image is decoded only once its
 * declared pixels fit in the budget shared with every other request (see PixelBudget).
 */
export async function detectImages(
  engine: SceneEngine,
  images: readonly ImageInput[],
  opts: { maxPixels: number; budget?: PixelBudget },
): Promise<ImageResult[]> {
  const results: ImageResult[] = [];
  for (let seq = 0; seq < images.length; seq++) {
    const input = images[seq];
    if (!input.ok) {
      results.push({ seq, status: 'failed', reason: input.reason });
      continue;
    }
    const meta = await header(input.data);
    const pixels = meta?.width && meta.height ? meta.width * meta.height : 0;
    if (pixels > opts.maxPixels) {
      results.push({ seq, status: 'failed', reason: 'image exceeds the pixel limit' });
      continue;
    }
    const release = opts.budget ? await opts.budget.acquire(pixels) : undefined;
    try {
      const prepared = await prepareImage(input.data, engine.inputSize, {
        maxPixels: opts.maxPixels,
        meta,
        keepRgb: engine.needsRgb,
      });
      const dets = await engine.detectImage(prepared);
      results.push({
        seq,
        status: 'succeeded',
        image: { width: prepared.width, height: prepared.height },
        objects: toObjects(dets, prepared.width, prepared.height),
      });
    } catch (err) {
      results.push({
        seq,
        status: 'failed',
        reason: err instanceof ImageDecodeError ? err.message : 'detection failed',
      });
    } finally {
      release?.();
    }
  }
  return results;
}
