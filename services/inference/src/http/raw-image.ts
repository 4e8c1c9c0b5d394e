import type { Request } from 'express';
import { invalidRequest } from '@vision/shared';
import type { ImageInput } from '../detect/detect-images';
import { MAX_FILE_BYTES, type DetectForm } from './multipart';

/** Content types of a detect request whose body is one image's bytes (the images service sends these). */
const RAW_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp', 'application/octet-stream']);

/** True when a body of this content type is one raw image rather than a multipart form. */
export function isRawType(contentType: string | undefined): boolean {
  return RAW_TYPES.has((contentType ?? '').split(';')[0].trim().toLowerCase());
}

/** True when the request's body is one raw image rather than a multipart form. */
export function isRawImage(req: Request): boolean {
  return isRawType(req.headers['content-type']);
}

/**
 * The images of a raw body of `size` bytes: none when it is empty, a failed entry when it is longer than
 * MAX_FILE_BYTES (as in a form), else its bytes (`bytes()`, read only then).
 */
export function rawImages(size: number, bytes: () => Buffer): ImageInput[] {
  if (size === 0) return [];
  if (size > MAX_FILE_BYTES) return [{ ok: false, reason: `file exceeds ${MAX_FILE_BYTES} bytes` }];
  return [{ ok: true, data: bytes() }];
}

/**
 * Reads a detect request whose body is the bytes of one image and whose `scene_code` is in the query
 * string: the image is sent once, as it was uploaded, with no multipart framing to write and parse
 * again. A body longer than MAX_FILE_BYTES becomes a failed entry (as in a form); its rest is drained.
 */
export async function readRawImage(req: Request): Promise<DetectForm> {
  const scene = req.query.scene_code;
  if (scene !== undefined && typeof scene !== 'string')
    throw invalidRequest('scene_code must be given once', 'invalid_field', { field: 'scene_code' });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= MAX_FILE_BYTES) chunks.push(chunk);
  }
  return { sceneCode: scene, images: rawImages(size, () => Buffer.concat(chunks, size)) };
}
