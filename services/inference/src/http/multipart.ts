import busboy from 'busboy';
import type { Request } from 'express';
import { invalidRequest } from '@vision/shared';
import type { ImageInput } from '../detect/detect-images';

export const MAX_FILES = 10;
export const MAX_FILE_BYTES = 8 * 1024 * 1024;

export interface DetectForm {
  sceneCode?: string;
  images: ImageInput[];
}

/**
 * Reads a multipart/form-data detect request: one `scene_code` field and 1..MAX_FILES `files`.
 * A file over MAX_FILE_BYTES becomes a failed entry; any other field or part is a 400.
 */
export function readDetectForm(req: Request): Promise<DetectForm> {
  return new Promise((resolve, reject) => {
    if (!req.is('multipart/form-data')) {
      reject(invalidRequest('Expected a multipart/form-data body', 'not_multipart'));
      return;
    }
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: req.headers,
        limits: {
          files: MAX_FILES,
          fileSize: MAX_FILE_BYTES,
          fields: 1,
          fieldSize: 256,
          parts: MAX_FILES + 1,
        },
      });
    } catch {
      reject(invalidRequest('Malformed multipart body', 'malformed_multipart'));
      return;
    }
    const form: DetectForm = { images: [] };
    let failed = false;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      req.unpipe(bb);
      req.resume();
      reject(err);
    };
    bb.on('field', (name, value) => {
      if (name !== 'scene_code')
        return fail(invalidRequest(`Unknown field ${name}`, 'unknown_field', { field: name }));
      if (form.sceneCode !== undefined)
        return fail(invalidRequest('scene_code given twice', 'duplicate_field'));
      form.sceneCode = value;
    });
    bb.on('file', (name, stream) => {
      if (name !== 'files') {
        stream.resume();
        return fail(invalidRequest(`Unknown field ${name}`, 'unknown_field', { field: name }));
      }
      const index = form.images.length;
      form.images.push({ ok: false, reason: 'incomplete' });
      const chunks: Buffer[] = [];
      let truncated = false;
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => {
        truncated = true;
      });
      stream.on('end', () => {
        form.images[index] = truncated
          ? { ok: false, reason: `file exceeds ${MAX_FILE_BYTES} bytes` }
          : { ok: true, data: Buffer.concat(chunks) };
      });
    });
    bb.on('filesLimit', () =>
      fail(invalidRequest(`At most ${MAX_FILES} files per request`, 'too_many_files')),
    );
    bb.on('fieldsLimit', () =>
      fail(invalidRequest('Only the scene_code field is accepted', 'unknown_field')),
    );
    bb.on('partsLimit', () => fail(invalidRequest('Too many parts', 'too_many_files')));
    bb.on('error', () => fail(invalidRequest('Malformed multipart body', 'malformed_multipart')));
    bb.on('close', () => {
      if (!failed) resolve(form);
    });
    req.pipe(bb);
  });
}
