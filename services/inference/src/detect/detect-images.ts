import type { DetectedObject } from '@vision/shared';
import { ImageDecodeError, prepareImage } from '../model/preprocess';
import type { SceneEngine } from '../scenes/engines';
import { toObjects } from './to-objects';

export type ImageInput = { ok: true; data: Buffer } | { ok: false; reason: string };

export type ImageResult =
  | { seq: number; status: 'succeeded'; image: { width: number; height: number }; objects: DetectedObject[] }
  | { seq: number; status: 'failed'; reason: string };

/**
 * Detects every image of a batch with one scene engine, in input order. A failing image yields a
 * `failed` entry and never fails the others.
 */
export async function detectImages(
  engine: SceneEngine,
  images: readonly ImageInput[],
  opts: { maxPixels: number },
): Promise<ImageResult[]> {
  const results: ImageResult[] = [];
  for (let seq = 0; seq < images.length; seq++) {
    const input = images[seq];
    if (!input.ok) {
      results.push({ seq, status: 'failed', reason: input.reason });
      continue;
    }
    try {
      const prepared = await prepareImage(input.data, engine.inputSize, {
        maxPixels: opts.maxPixels,
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
    }
  }
  return results;
}
