/**
 * The one multipart/form-data reader (busboy, every limit set) of the upload endpoints: video tasks,
 * image detections and inference's detect. The caller names its file field, its value fields and its
 * limits; each file part is handed to `onFile` as a stream while the body is still arriving. The first
 * violation rejects with OP-TASK-REQUEST-INVALID and a `details.reason` from reasons.ts, identical for
 * every endpoint; the rest of the body is then read and thrown away (up to a bound) so that the
 * client can read the answer.
 */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { ApiError, invalidRequest } from '../contract/errors';
import { REASON } from '../contract/reasons';
import { setEarlyAnswerLimits } from './early-answer';

export interface FilePart {
  /** Zero-based index among the file parts of the body. */
  seq: number;
  stream: Readable;
  filename?: string;
  mimeType: string;
  /** After the stream ended: true when the file was longer than maxFileBytes (only with oversize 'flag'). */
  truncated(): boolean;
}

export interface MultipartSpec<T> {
  fileField: string;
  valueFields: readonly string[];
  /** Files accepted (more: too_many_files); fewer than minFiles (default 1): file_missing. */
  maxFiles: number;
  minFiles?: number;
  /** Largest accepted file, in bytes: a file of exactly this size is accepted. */
  maxFileBytes: number;
  /** Largest accepted body (declared Content-Length and bytes counted); unbounded when absent. */
  maxBodyBytes?: number;
  maxFieldBytes?: number;
  /** 'reject' (default): a longer file fails the request (file_too_large); 'flag': it is cut and flagged. */
  oversize?: 'reject' | 'flag';
  /** Consumes the part's stream; its rejection fails the request with that error. */
  onFile(part: FilePart): Promise<T>;
}

export interface MultipartForm<T> {
  /** Value fields as sent (each at most once). */
  fields: Record<string, string>;
  /** What onFile resolved with, in upload order. */
  files: T[];
}

/** Thrown for an upload the client abandoned (no answer can reach it). */
export class UploadAborted extends Error {
  constructor() {
    super('client aborted the upload');
    this.name = 'UploadAborted';
  }
}

export function readMultipart<T>(req: IncomingMessage, spec: MultipartSpec<T>): Promise<MultipartForm<T>> {
  const drainBound = spec.maxBodyBytes ?? spec.maxFileBytes + 1024 * 1024;
  const contentType = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\b/i.test(contentType))
    return Promise.reject(
      discardBody(
        req,
        drainBound,
        invalidRequest('The body must be multipart/form-data', REASON.not_multipart),
      ),
    );
  const declared = Number(req.headers['content-length']);
  if (spec.maxBodyBytes !== undefined && Number.isFinite(declared) && declared > spec.maxBodyBytes)
    return Promise.reject(discardBody(req, drainBound, bodyTooLarge(spec.maxBodyBytes)));

  let bb: busboy.Busboy;
  try {
    bb = busboy({
      headers: req.headers,
      limits: {
        fieldNameSize: 64,
        fieldSize: spec.maxFieldBytes ?? 256,
        // One more than allowed: an unexpected extra field is then reported by its name.
        fields: spec.valueFields.length + 1,
        // busboy emits 'limit' when a file reaches fileSize: one more byte lets exactly maxFileBytes through.
        fileSize: spec.maxFileBytes + 1,
        files: spec.maxFiles,
        parts: spec.maxFiles + spec.valueFields.length + 1,
        headerPairs: 16,
      },
    });
  } catch {
    return Promise.reject(
      discardBody(
        req,
        drainBound,
        invalidRequest('The multipart body is malformed', REASON.malformed_multipart),
      ),
    );
  }

  return new Promise<MultipartForm<T>>((resolve, reject) => {
    const fields: Record<string, string> = {};
    const results: Promise<T>[] = [];
    const open = new Set<Readable>();
    let failed: Error | undefined;
    let closed = false;
    let received = 0;

    const fail = (err: Error): void => {
      if (failed) return;
      failed = err;
      setEarlyAnswerLimits(req, { bound: drainBound });
      // busboy itself is left to be collected: destroying it from inside its callbacks breaks its state.
      req.unpipe(bb);
      bb.on('error', () => undefined);
      // Handlers reading a part see it end early (premature close) and settle.
      for (const s of open) s.destroy();
      req.resume(); // unpipe paused the request: keep draining so that the answer is not stalled
      // Every file handler settles (and cleans up what it wrote) before the request is answered.
      void Promise.allSettled(results).then(() => reject(err));
    };

    const finish = (): void => {
      if (failed || !closed) return;
      if (results.length < (spec.minFiles ?? 1))
        return fail(invalidRequest(`A file is required in field "${spec.fileField}"`, REASON.file_missing));
      Promise.all(results).then(
        (files) => {
          if (!failed) resolve({ fields, files });
        },
        (err: Error) => fail(err),
      );
    };

    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (failed) return; // discarded, within the bound set at fail (early-answer.ts)
      if (spec.maxBodyBytes !== undefined && received > spec.maxBodyBytes)
        fail(bodyTooLarge(spec.maxBodyBytes));
    });
    req.on('aborted', () => fail(new UploadAborted()));
    req.on('error', (err) => fail(err));

    bb.on('file', (name, stream, info) => {
      if (failed) return void stream.resume();
      if (name !== spec.fileField) {
        stream.resume();
        return fail(unknownField(name, `files go in "${spec.fileField}"`));
      }
      const seq = results.length;
      let truncated = false;
      open.add(stream);
      // busboy errors the part's stream when the body ends inside it ('Unexpected end of file'); the
      // handler's read then fails with that error or one it wrapped. Either way the caller's body is at fault.
      let broken: Error | undefined;
      stream.on('error', (err: Error) => (broken = err));
      stream.on('close', () => open.delete(stream));
      stream.on('limit', () => {
        truncated = true;
        if (spec.oversize !== 'flag')
          fail(
            invalidRequest(`File ${seq} is larger than ${spec.maxFileBytes} bytes`, REASON.file_too_large, {
              seq,
              max_bytes: spec.maxFileBytes,
            }),
          );
      });
      const handled = spec
        .onFile({
          seq,
          stream,
          filename: info.filename,
          mimeType: info.mimeType,
          truncated: () => truncated,
        })
        .catch((err: Error) => {
          const reported = broken && !(err instanceof ApiError) ? truncatedBody() : err;
          fail(reported);
          throw reported;
        });
      handled.catch(() => undefined);
      results.push(handled);
    });

    bb.on('field', (name, value, info) => {
      if (failed) return;
      if (!spec.valueFields.includes(name) || info.nameTruncated)
        return fail(unknownField(name, `value fields: ${spec.valueFields.join(', ')}`));
      if (fields[name] !== undefined)
        return fail(
          invalidRequest(`Field "${name}" given more than once`, REASON.duplicate_field, { field: name }),
        );
      if (info.valueTruncated)
        return fail(invalidRequest(`Field "${name}" is too long`, REASON.field_too_large, { field: name }));
      fields[name] = value;
    });

    bb.on('filesLimit', () =>
      fail(
        invalidRequest(`At most ${spec.maxFiles} files per request`, REASON.too_many_files, {
          max_files: spec.maxFiles,
        }),
      ),
    );
    bb.on('fieldsLimit', () => fail(invalidRequest('Too many value fields', REASON.too_many_fields)));
    bb.on('partsLimit', () => fail(invalidRequest('Too many parts in the body', REASON.too_many_parts)));
    // busboy's 'Unexpected end of form' and 'Malformed part header'.
    bb.on('error', () => fail(truncatedBody()));
    bb.on('close', () => {
      closed = true;
      finish();
    });
    req.pipe(bb);
  });
}

/** Reads a file part into memory (it is at most maxFileBytes long). */
export async function bufferPart(part: FilePart): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of part.stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** busboy passes `undefined` as the name of a part whose Content-Disposition has none. */
function unknownField(name: string | undefined, hint: string): ApiError {
  if (typeof name !== 'string')
    return invalidRequest(`A part has no name in its Content-Disposition; ${hint}`, REASON.unknown_field, {
      field: '',
    });
  const field = name.slice(0, 64);
  return invalidRequest(`Unexpected field ${JSON.stringify(field)}; ${hint}`, REASON.unknown_field, {
    field,
  });
}

function truncatedBody(): ApiError {
  return invalidRequest('The multipart body is truncated or malformed', REASON.malformed_multipart);
}

function bodyTooLarge(max: number): ApiError {
  return invalidRequest(`The request body is larger than ${max} bytes`, REASON.body_too_large, {
    max_bytes: max,
  });
}

/**
 * Lets the client finish sending (so it can read the answer) while throwing the bytes away, up to a
 * bound: the answer to `err` then leaves by the rule of early-answer.ts.
 */
export function discardBody<E extends Error>(req: IncomingMessage, bound: number, err: E): E {
  setEarlyAnswerLimits(req, { bound });
  req.on('error', () => undefined);
  req.resume();
  return err;
}
