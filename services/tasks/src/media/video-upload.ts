/**
 * Receives `POST /v1/vision/video-tasks` bodies with the shared multipart reader: exactly one file
 * field `file` and at most one each of the value fields `scene_code`, `zones` and `lines`. The file is streamed into the object store
 * while its sha256 is computed and its first bytes are checked for an MP4/MOV `ftyp` box; the body
 * is never held in memory. Any failure deletes what was written.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import {
  ApiError,
  type FilePart,
  type ObjectStore,
  REASON,
  VIDEO_UPLOAD,
  invalidRequest,
  readMultipart,
} from '@vision/shared';
import { SNIFF_BYTES, type VideoContainer, sniffVideoContainer } from '../domain/ftyp';

export interface ReceivedVideo {
  sceneCode?: string;
  /** The `zones` and `lines` text fields as sent (JSON arrays, checked by the create). */
  zones?: string;
  lines?: string;
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
      if (this.head.length >= SNIFF_BYTES && !this.check()) return cb(notVideo());
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

const notVideo = () => invalidRequest('file must be an MP4 or MOV video', REASON.unsupported_type);

/** Streams one file part into the store under `key`; on any failure the object is deleted. */
async function storeVideo(
  part: FilePart,
  store: ObjectStore,
  key: string,
): Promise<Omit<ReceivedVideo, 'sceneCode' | 'zones' | 'lines'>> {
  const sniffer = new SniffAndHash();
  let sniffError: Error | undefined;
  sniffer.on('error', (err: Error) => (sniffError ??= err));
  // A part the reader cuts short (a size limit, a later broken part) closes without ending: end the
  // sniffer so that the store's upload completes, and mark it failed so that the object is deleted.
  part.stream.on('close', () => {
    if (part.stream.readableEnded || sniffer.destroyed) return;
    sniffError ??= new Error('upload cut short');
    sniffer.end();
  });
  part.stream.pipe(sniffer);
  try {
    await store.put(key, sniffer, { contentType: 'application/octet-stream' });
  } catch (err) {
    await store.delete([key]).catch(() => undefined);
    if (sniffError instanceof ApiError) throw sniffError;
    if (sniffError) throw sniffError;
    throw err instanceof ApiError
      ? err
      : new ApiError('OP-SYS-UNAVAILABLE', 'Object storage is unavailable, retry later');
  }
  if (sniffError || !sniffer.container) {
    await store.delete([key]).catch(() => undefined);
    throw sniffError ?? notVideo();
  }
  return { key, sha256: sniffer.hash.digest('hex'), size: sniffer.size, container: sniffer.container };
}

export async function receiveVideoUpload(
  req: IncomingMessage,
  store: ObjectStore,
  opts: { maxBytes: number; keyPrefix: string },
): Promise<ReceivedVideo> {
  const key = `${opts.keyPrefix}/${randomUUID()}`;
  let stored: Omit<ReceivedVideo, 'sceneCode' | 'zones' | 'lines'> | undefined;
  try {
    const form = await readMultipart(req, {
      fileField: VIDEO_UPLOAD.fileField,
      valueFields: VIDEO_UPLOAD.valueFields,
      maxFiles: 1,
      maxFieldBytes: VIDEO_UPLOAD.maxFieldBytes,
      maxFileBytes: opts.maxBytes,
      maxBodyBytes: opts.maxBytes + VIDEO_UPLOAD.framingBytes,
      onFile: async (part) => (stored = await storeVideo(part, store, key)),
    });
    const video = form.files[0];
    return {
      ...video,
      sceneCode: form.fields.scene_code,
      zones: form.fields.zones,
      lines: form.fields.lines,
    };
  } catch (err) {
    // A failure after the file was stored (a later part broke the form) leaves nothing behind either.
    if (stored) await store.delete([key]).catch(() => undefined);
    throw err;
  }
}
