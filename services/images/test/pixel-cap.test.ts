/**
 * One pixel cap for images and inference (IMAGE_UPLOAD.maxPixels): an image at the cap passes the images
 * service's header check, one row more is refused there (400 too_many_pixels), and inference's decoder
 * has the same cap, so no image passes images only to fail in inference.
 */
import zlib from 'node:zlib';
import { ApiError, IMAGE_UPLOAD } from '@vision/shared';
import { inferenceShape } from '@vision/inference';
import { DEFAULT_MAX_INPUT_PIXELS } from '../../inference/src/model/preprocess';
import { imagesShape } from '../src/config';
import { checkPixelCounts } from '../src/http/upload/pixel-limit';
import type { UploadedImage } from '../src/domain/call';

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(Buffer.concat([Buffer.from(type), data])) >>> 0);
  return Buffer.concat([len, Buffer.from(type), data, crc]);
}

/** A PNG declaring `width` x `height` grey pixels (its header only: nothing to decode). */
function png(width: number, height: number): UploadedImage {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;
  const data = Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', header),
    chunk('IDAT', zlib.deflateSync(Buffer.alloc(0))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  return { seq: 0, type: 'png', data, sha256: '' };
}

describe('the pixel cap', () => {
  it('is one figure: images check and inference decoder', () => {
    expect(IMAGE_UPLOAD.maxPixels).toBe(40_000_000);
    expect(imagesShape.IMAGES_MAX_PIXELS.parse(undefined)).toBe(IMAGE_UPLOAD.maxPixels);
    expect(inferenceShape.INFERENCE_MAX_IMAGE_PIXELS.parse(undefined)).toBe(IMAGE_UPLOAD.maxPixels);
    expect(DEFAULT_MAX_INPUT_PIXELS).toBe(IMAGE_UPLOAD.maxPixels);
  });

  it('lets an image of exactly the cap through, and refuses one row more', async () => {
    await expect(checkPixelCounts([png(8000, 5000)], IMAGE_UPLOAD.maxPixels)).resolves.toBeUndefined();
    const refused = await checkPixelCounts([png(8000, 5001)], IMAGE_UPLOAD.maxPixels).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).details).toMatchObject({
      reason: 'too_many_pixels',
      width: 8000,
      height: 5001,
      max_pixels: 40_000_000,
    });
  });
});
