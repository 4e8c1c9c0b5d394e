/**
 * Receives `POST /v1/vision/video-tasks` multipart bodies with busboy (every limit set): exactly one
 * file field `file` and at most one value field `scene_code`. The file is streamed into the object
 * store while its sha256 is computed and its first bytes are checked for an MP4/MOV `ftyp` box; the
 * body is never held in memory. Any failure deletes what was written.
 */
import { createHash, randomUUID } from 'node:crypto';
import { PassThrough, Transform, type TransformCallback } from 'node:stream';
import type { Request } from 'express';
import busboy from 'busboy';
import { ApiError, type ObjectStore, invalidRequest } from '@vision/shared';
import { SNIFF_BYTES, type VideoContainer, sniffVideoContainer } from '../domain/ftyp';

export interface ReceivedVideo {
  sceneCode?: string;
  key: string;
  sha256: string;
  size: number;
  container: VideoContainer;
}

class SniffAndHash extends Transform {
  private head = Buffer.alloc(0);
  private checked = false;
  readonly hash = createHash('sha256');
  size = 0;
  container?: VideoContainer;

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.hash.update(chunk);
    this.size += chunk.length;
    if (!this.checked) {
      this.head = Buffer.concat([this.head, chunk.subarray(0, SNIFF_BYTES - this.head.length)]);
      if (this.head.length >= SNIFF_BYTES) {
        if (!this.check()) return cb(notVideo());
      }
    }
    cb(null, chunk);
  }

  override _flush(cb: TransformCallback): void {
    if (!this.checked && !this.check()) return cb(notVideo());
    if (this.size === 0) return cb(notVideo());
    cb();
  }

  private check(): boolean {
    this.checked = true;
    this.container = sniffVideoContainer(this.head);
    return this.container !== undefined;
  }
}

const notVideo = () => invalidRequest('file must be an MP4 or MOV video', 'file_type');

export async function receiveVideoUpload(
  req: Request,
  store: ObjectStore,
  opts: { maxBytes: number; keyPrefix: string },
): Promise<ReceivedVideo> {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(type))
    throw invalidRequest('Expected a multipart/form-data body', 'content_type');
  let bb: busboy.Busboy;
  try {
    bb = busboy({
      headers: req.headers,
      limits: {
        fieldNameSize: 64,
        fieldSize: 256,
        fields: 2, // one more than allowed: the handlers below refuse the extra one by name
        // busboy reports 'limit' when the size reaches fileSize: one more lets exactly maxBytes through.
        fileSize: opts.maxBytes + 1,
        files: 2,
        parts: 4,
        headerPairs: 32,
      },
    });
  } catch {
    throw invalidRequest('Malformed multipart body', 'malformed_multipart');
  }

  const key = `${opts.keyPrefix}/${randomUUID()}`;
  return new Promise<ReceivedVideo>((resolve, reject) => {
    let failed: ApiError | Error | undefined;
    let sceneCode: string | undefined;
    let upload: Promise<{ size: number }> | undefined;
    let sniffer: SniffAndHash | undefined;
    let bodyStream: PassThrough | undefined;
    let sawFile = false;
    let bodyDone = false;

    const fail = (err: ApiError | Error) => {
      if (failed) return;
      failed = err;
      sniffer?.destroy(err);
      bodyStream?.destroy(err);
      req.unpipe(bb);
      req.resume(); // drain the rest so the answer can be sent
      const cleanup = upload
        ? upload.catch(() => undefined).then(() => store.delete([key]))
        : Promise.resolve();
      cleanup.catch(() => undefined).finally(() => reject(err));
    };

    bb.on('field', (name, value, info) => {
      if (name !== 'scene_code')
        return fail(
          invalidRequest(`Unexpected form field ${JSON.stringify(name.slice(0, 64))}`, 'unknown_field'),
        );
      if (sceneCode !== undefined) return fail(invalidRequest('scene_code given twice', 'unknown_field'));
      if (info.valueTruncated || info.nameTruncated)
        return fail(invalidRequest('scene_code is too long', 'field_too_large'));
      sceneCode = value;
    });
    bb.on('file', (name, stream) => {
      if (name !== 'file' || sawFile) {
        stream.resume();
        return fail(
          invalidRequest(`Unexpected file field ${JSON.stringify(name.slice(0, 64))}`, 'unknown_field'),
        );
      }
      sawFile = true;
      sniffer = new SniffAndHash();
      const s = sniffer;
      stream.on('limit', () => {
        fail(invalidRequest(`file is larger than ${opts.maxBytes} bytes`, 'file_too_large'));
      });
      stream.on('error', (err: Error) => fail(err));
      s.on('error', (err: Error) => fail(err));
      const body = new PassThrough();
      bodyStream = body;
      body.on('error', () => undefined); // reported through fail(); the store sees the destroyed stream
      s.pipe(body);
      stream.pipe(s);
      upload = store.put(key, body, { contentType: 'application/octet-stream' });
      upload.catch((err: Error) =>
        fail(
          err instanceof ApiError
            ? err
            : new ApiError('OP-SYS-UNAVAILABLE', 'Object storage is unavailable, retry later'),
        ),
      );
      upload.then(() => maybeDone()).catch(() => undefined);
    });
    bb.on('fieldsLimit', () =>
      fail(invalidRequest('Only the scene_code field is accepted', 'unknown_field')),
    );
    bb.on('filesLimit', () => fail(invalidRequest('Only one file is accepted', 'unknown_field')));
    bb.on('partsLimit', () => fail(invalidRequest('Too many form parts', 'unknown_field')));
    bb.on('error', () => fail(invalidRequest('Malformed multipart body', 'malformed_multipart')));
    bb.on('close', () => {
      bodyDone = true;
      if (!sawFile) return fail(invalidRequest('file is required', 'file_missing'));
      maybeDone();
    });
    req.on('aborted', () => fail(invalidRequest('Upload aborted', 'aborted')));

    let settled = false;
    const maybeDone = () => {
      if (failed || settled || !bodyDone || !upload || !sniffer) return;
      const s = sniffer;
      upload
        .then(() => {
          if (failed || settled) return;
          settled = true;
          if (!s.container) return fail(notVideo());
          resolve({ sceneCode, key, sha256: s.hash.digest('hex'), size: s.size, container: s.container });
        })
        .catch(() => undefined);
    };

    req.pipe(bb);
  });
}
