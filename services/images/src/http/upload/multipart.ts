import type { IncomingMessage } from 'node:http';
import { IMAGE_UPLOAD, REASON, type FilePart, invalidRequest, readMultipart } from '@vision/shared';
import { type ImageType, SNIFF_BYTES, sniffImageType } from '../../domain/image-type';
import { sha256Hex } from '../../domain/fingerprint';
import type { UploadedImage } from '../../domain/call';
import { MAX_ZONES_FIELD_BYTES, ZONES_FIELD } from '../../domain/image-zones';

export const FILE_FIELD = IMAGE_UPLOAD.fileField;
export const SCENE_FIELD = 'scene_code';

export interface UploadLimits {
  maxFileBytes: number;
  maxBodyBytes: number;
  maxFiles: number;
}

export interface ParsedUpload {
  /** As sent; undefined when the field was absent (the caller applies the default). */
  sceneCode?: string;
  /** The `zones` text field as sent (a JSON array of Zone), undefined when absent. */
  zones?: string;
  files: UploadedImage[];
}

/**
 * Reads a multipart image upload (SPEC.md 4.6) with the shared reader: only the file field `files`
 * (1..maxFiles files, each at most maxFileBytes, JPG/PNG/WEBP by content, refused as soon as the
 * first bytes tell) and only the value fields `scene_code` and `zones`; at most maxBodyBytes in all.
 */
export async function parseImageUpload(req: IncomingMessage, limits: UploadLimits): Promise<ParsedUpload> {
  const form = await readMultipart(req, {
    fileField: FILE_FIELD,
    valueFields: [SCENE_FIELD, ZONES_FIELD],
    maxFiles: limits.maxFiles,
    maxFileBytes: limits.maxFileBytes,
    maxBodyBytes: limits.maxBodyBytes,
    maxFieldBytes: MAX_ZONES_FIELD_BYTES,
    onFile: readImage,
  });
  return { sceneCode: form.fields[SCENE_FIELD], zones: form.fields[ZONES_FIELD], files: form.files };
}

async function readImage(part: FilePart): Promise<UploadedImage> {
  const chunks: Buffer[] = [];
  let size = 0;
  let type: ImageType | undefined;
  for await (const chunk of part.stream) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (!type && size >= SNIFF_BYTES) {
      type = sniffImageType(Buffer.concat(chunks).subarray(0, SNIFF_BYTES));
      if (!type) throw unsupported(part.seq);
    }
  }
  const data = Buffer.concat(chunks, size);
  type ??= sniffImageType(data);
  if (!type) throw unsupported(part.seq);
  return { seq: part.seq, type, data, sha256: sha256Hex(data) };
}

function unsupported(seq: number) {
  return invalidRequest(`Image ${seq} is not a JPG, PNG or WEBP image`, REASON.unsupported_type, { seq });
}
