import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { type ApiError, invalidRequest } from '@vision/shared';
import { type ImageType, SNIFF_BYTES, sniffImageType } from '../domain/image-type';
import { sha256Hex } from '../domain/fingerprint';

export const FILE_FIELD = 'files';
export const SCENE_FIELD = 'scene_code';

export interface UploadLimits {
  maxFileBytes: number;
  maxBodyBytes: number;
  maxFiles: number;
}

export interface UploadedImage {
  seq: number;
  type: ImageType;
  data: Buffer;
  sha256: string;
}

export interface ParsedUpload {
  /** As sent; undefined when the field was absent (the caller applies the default). */
  sceneCode?: string;
  files: UploadedImage[];
}

/**
 * Reads a multipart image upload (SPEC.md 4.6) while it streams in, with every busboy limit set:
 * only the file field `files` (1..maxFiles files, each at most maxFileBytes, JPG/PNG/WEBP by content)
 * and only the value field `scene_code`; at most maxBodyBytes in all (Content-Length is checked
 * before reading, and bytes are counted while reading). The first violation rejects with
 * OP-TASK-REQUEST-INVALID and `details.reason`; the rest of the body is then discarded unread.
 */
export function parseImageUpload(req: IncomingMessage, limits: UploadLimits): Promise<ParsedUpload> {
  return new Promise<ParsedUpload>((resolve, reject) => {
    let done = false;
    let received = 0;
    let drained = 0;

    const contentType = req.headers['content-type'] ?? '';
    if (!/^multipart\/form-data\b/i.test(contentType)) {
      reject(discard(req, limits, invalidRequest('The body must be multipart/form-data', 'not_multipart')));
      return;
    }
    const declared = Number(req.headers['content-length']);
    if (
      req.headers['content-length'] !== undefined &&
      Number.isFinite(declared) &&
      declared > limits.maxBodyBytes
    ) {
      reject(discard(req, limits, bodyTooLarge(limits)));
      return;
    }

    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: req.headers,
        limits: {
          fieldNameSize: 64,
          fieldSize: 128,
          // scene_code, plus one more so that an unexpected second field is reported by its name.
          fields: 2,
          fileSize: limits.maxFileBytes + 1,
          files: limits.maxFiles,
          parts: limits.maxFiles + 2,
          headerPairs: 16,
        },
      });
    } catch {
      reject(
        discard(
          req,
          limits,
          invalidRequest('The multipart body has no usable boundary', 'malformed_multipart'),
        ),
      );
      return;
    }

    const files: UploadedImage[] = [];
    let sceneCode: string | undefined;
    let pendingFiles = 0;
    let closed = false;

    const fail = (err: ApiError | Error): void => {
      if (done) return;
      done = true;
      // busboy is left to be collected: destroying it from inside its own callbacks breaks its state.
      req.unpipe(bb);
      req.resume(); // unpipe paused the request: keep draining it so that the answer is not stalled
      bb.on('error', () => undefined);
      reject(err);
    };
    const maybeFinish = (): void => {
      if (done || !closed || pendingFiles > 0) return;
      if (files.length === 0)
        return fail(invalidRequest('At least one image is required in field "files"', 'no_files'));
      done = true;
      resolve({ sceneCode, files });
    };

    // Counts every byte, before and after a failure; after one, discards the rest up to a bound.
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (done) {
        drained += chunk.length;
        if (drained > limits.maxBodyBytes) req.destroy();
        return;
      }
      if (received > limits.maxBodyBytes) fail(bodyTooLarge(limits));
    });
    req.on('aborted', () => fail(new Error('client aborted the upload')));
    req.on('error', (err) => fail(err));

    bb.on('file', (name, stream, _info) => {
      if (done) return void stream.resume();
      if (name !== FILE_FIELD) {
        stream.resume();
        return fail(
          invalidRequest(
            `Unexpected file field "${name}"; images go in "${FILE_FIELD}"`,
            'unexpected_field',
            {
              field: name,
            },
          ),
        );
      }
      const seq = files.length + pendingFiles;
      pendingFiles += 1;
      const chunks: Buffer[] = [];
      let size = 0;
      let sniffed = false;
      stream.on('data', (chunk: Buffer) => {
        if (done) return;
        chunks.push(chunk);
        size += chunk.length;
        if (!sniffed && size >= SNIFF_BYTES) {
          sniffed = true;
          if (!sniffImageType(Buffer.concat(chunks).subarray(0, SNIFF_BYTES))) fail(unsupported(seq));
        }
      });
      stream.on('limit', () =>
        fail(
          invalidRequest(`Image ${seq} is larger than ${limits.maxFileBytes} bytes`, 'file_too_large', {
            seq,
            max_bytes: limits.maxFileBytes,
          }),
        ),
      );
      stream.on('end', () => {
        pendingFiles -= 1;
        if (done) return;
        const data = Buffer.concat(chunks, size);
        const type = sniffImageType(data.subarray(0, SNIFF_BYTES));
        if (!type) return fail(unsupported(seq));
        files[seq] = { seq, type, data, sha256: sha256Hex(data) };
        maybeFinish();
      });
      stream.on('error', (err: Error) => fail(err));
    });

    bb.on('field', (name, value, info) => {
      if (done) return;
      if (name !== SCENE_FIELD || info.nameTruncated)
        return fail(
          invalidRequest(
            `Unexpected field "${name}"; the only value field is "${SCENE_FIELD}"`,
            'unexpected_field',
            {
              field: name,
            },
          ),
        );
      if (sceneCode !== undefined)
        return fail(
          invalidRequest(`Field "${SCENE_FIELD}" given more than once`, 'duplicate_field', { field: name }),
        );
      if (info.valueTruncated)
        return fail(invalidRequest(`Field "${SCENE_FIELD}" is too long`, 'field_too_large', { field: name }));
      sceneCode = value;
    });

    bb.on('filesLimit', () =>
      fail(
        invalidRequest(`At most ${limits.maxFiles} images per request`, 'too_many_files', {
          max_files: limits.maxFiles,
        }),
      ),
    );
    bb.on('fieldsLimit', () => fail(invalidRequest('Too many value fields', 'too_many_fields')));
    bb.on('partsLimit', () => fail(invalidRequest('Too many parts in the body', 'too_many_parts')));
    bb.on('error', () => fail(invalidRequest('The multipart body is malformed', 'malformed_multipart')));
    bb.on('close', () => {
      closed = true;
      maybeFinish();
    });

    req.pipe(bb);
  });
}

function bodyTooLarge(limits: UploadLimits): ApiError {
  return invalidRequest(`The request body is larger than ${limits.maxBodyBytes} bytes`, 'body_too_large', {
    max_bytes: limits.maxBodyBytes,
  });
}

function unsupported(seq: number): ApiError {
  return invalidRequest(`Image ${seq} is not a JPG, PNG or WEBP image`, 'unsupported_type', { seq });
}

/** Lets the client finish sending (so it can read the answer) while throwing the bytes away, up to a bound. */
export function discard(req: IncomingMessage, limits: UploadLimits, err: ApiError): ApiError {
  let drained = 0;
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > limits.maxBodyBytes) req.destroy();
  });
  req.on('error', () => undefined);
  req.resume();
  return err;
}
