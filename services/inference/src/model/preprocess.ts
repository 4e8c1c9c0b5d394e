import sharp, { type ExtendOptions, type Metadata } from 'sharp';
import { IMAGE_UPLOAD } from '@vision/shared';
import type { RgbImage } from '../detection-types';
import { LETTERBOX_PAD_VALUE, letterboxFor, packBgrTensor, type Letterbox } from './letterbox';
import { takeTensor } from './tensor-pool';

/** Largest image (in pixels) the decoder accepts; protects against decompression bombs (the images service's cap). */
export const DEFAULT_MAX_INPUT_PIXELS = IMAGE_UPLOAD.maxPixels;

export interface PreparedImage {
  /** Original (EXIF-oriented) size. */
  width: number;
  height: number;
  letterbox: Letterbox;
  tensor: Float32Array;
  /** Full-resolution RGB pixels, only when requested (classical detectors need them). */
  rgb?: RgbImage;
}

export class ImageDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImageDecodeError';
  }
}

const ACCEPTED_FORMATS = new Set(['jpeg', 'png', 'webp']);

/**
 * Decodes an encoded JPG/PNG/WEBP image with sharp (EXIF rotation applied, alpha removed) and
 * letterboxes it for a model of side `size` (PROVENANCE.md 1.1: bilinear resize, top-left on 114, BGR).
 */
export async function prepareImage(
  encoded: Buffer,
  size: number,
  /** `meta`: the image's header when the caller has read it already (it is not read again). */
  opts: { maxPixels?: number; keepRgb?: boolean; meta?: Metadata } = {},
): Promise<PreparedImage> {
  const limitInputPixels = opts.maxPixels ?? DEFAULT_MAX_INPUT_PIXELS;
  let meta: Metadata;
  try {
    meta = opts.meta ?? (await sharp(encoded, { limitInputPixels }).metadata());
  } catch {
    throw new ImageDecodeError('not a decodable image');
  }
  if (!meta.format || !ACCEPTED_FORMATS.has(meta.format))
    throw new ImageDecodeError(
      `unsupported image format${meta.format ? ` ${meta.format}` : ''} (JPG, PNG, WEBP only)`,
    );
  if (!meta.width || !meta.height) throw new ImageDecodeError('image has no dimensions');
  if (meta.width * meta.height > limitInputPixels)
    throw new ImageDecodeError('image exceeds the pixel limit');
  try {
    if (opts.keepRgb) {
      const { data, info } = await sharp(encoded, { limitInputPixels })
        .rotate()
        .removeAlpha()
        .toColourspace('srgb')
        .raw()
        .toBuffer({ resolveWithObject: true });
      return {
        ...(await letterboxRgb(data, info.width, info.height, size)),
        rgb: { data, width: info.width, height: info.height, channels: 3 },
      };
    }
    const oriented = meta.autoOrient ?? { width: meta.width, height: meta.height };
    const lb = letterboxFor(oriented.width, oriented.height, size);
    const { data, info } = await sharp(encoded, { limitInputPixels })
      .rotate()
      .removeAlpha()
      .toColourspace('srgb')
      .resize(lb.width, lb.height, { kernel: 'linear', fit: 'fill' })
      .extend(padding(lb))
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3 || info.width !== size || info.height !== size)
      throw new ImageDecodeError('unexpected decoded layout');
    return {
      width: oriented.width,
      height: oriented.height,
      letterbox: lb,
      tensor: packBgrTensor(data, size, size, size, 'rgb', takeTensor(3 * size * size)),
    };
  } catch (err) {
    if (err instanceof ImageDecodeError) throw err;
    throw new ImageDecodeError('image could not be decoded');
  }
}

/** The bottom/right padding that completes a resized image to the letterbox canvas (one libvips pass). */
function padding(lb: Letterbox): ExtendOptions {
  const v = LETTERBOX_PAD_VALUE;
  return { right: lb.size - lb.width, bottom: lb.size - lb.height, background: { r: v, g: v, b: v } };
}

/** Letterboxes raw RGB pixels already in memory. */
export async function letterboxRgb(
  rgb: Buffer,
  width: number,
  height: number,
  size: number,
): Promise<{ width: number; height: number; letterbox: Letterbox; tensor: Float32Array }> {
  const lb = letterboxFor(width, height, size);
  const resized =
    lb.width === width && lb.height === height
      ? rgb
      : await sharp(rgb, { raw: { width, height, channels: 3 } })
          .resize(lb.width, lb.height, { kernel: 'linear', fit: 'fill' })
          .raw()
          .toBuffer();
  return { width, height, letterbox: lb, tensor: packBgrTensor(resized, lb.width, lb.height, size, 'rgb') };
}
