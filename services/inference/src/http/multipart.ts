import type { Request } from 'express';
import { IMAGE_UPLOAD, bufferPart, readMultipart } from '@vision/shared';
import type { ImageInput } from '../detect/detect-images';

export const MAX_FILES = IMAGE_UPLOAD.maxFiles;
export const MAX_FILE_BYTES = IMAGE_UPLOAD.maxFileBytes;

export interface DetectForm {
  sceneCode?: string;
  images: ImageInput[];
}

/**
 * Reads a multipart/form-data detect request with the shared reader: one `scene_code` field and
 * 0..MAX_FILES `files` (the route asks for at least one). A file longer than MAX_FILE_BYTES (8 MiB:
 * exactly 8 MiB is accepted) becomes a failed entry; any other field or part is a 400.
 */
export async function readDetectForm(req: Request): Promise<DetectForm> {
  const form = await readMultipart<ImageInput>(req, {
    fileField: IMAGE_UPLOAD.fileField,
    valueFields: IMAGE_UPLOAD.valueFields,
    maxFiles: MAX_FILES,
    minFiles: 0,
    maxFileBytes: MAX_FILE_BYTES,
    maxBodyBytes: IMAGE_UPLOAD.maxBodyBytes,
    oversize: 'flag',
    onFile: async (part) => {
      const data = await bufferPart(part);
      return part.truncated()
        ? { ok: false, reason: `file exceeds ${MAX_FILE_BYTES} bytes` }
        : { ok: true, data };
    },
  });
  return { sceneCode: form.fields.scene_code, images: form.files };
}
