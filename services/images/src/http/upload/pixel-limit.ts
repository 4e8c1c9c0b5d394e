import sharp from 'sharp';
import { invalidRequest } from '@vision/shared';
import type { UploadedImage } from '../../domain/call';

/**
 * Rejects images whose declared size exceeds `maxPixels` (width x height), read from the header
 * without decoding, so that a small file cannot expand into gigabytes of pixels (decompression bomb).
 * A header sharp cannot read is let through: inference then fails that image alone.
 */
export async function checkPixelCounts(files: readonly UploadedImage[], maxPixels: number): Promise<void> {
  for (const f of files) {
    let width: number | undefined;
    let height: number | undefined;
    try {
      ({ width, height } = await sharp(f.data, { limitInputPixels: false }).metadata());
    } catch {
      continue;
    }
    if (width !== undefined && height !== undefined && width * height > maxPixels)
      throw invalidRequest(`Image ${f.seq} has more than ${maxPixels} pixels`, 'too_many_pixels', {
        seq: f.seq,
        width,
        height,
        max_pixels: maxPixels,
      });
  }
}
