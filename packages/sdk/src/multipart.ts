import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';

/**
 * What an upload can be made of: a file path, the bytes (a Buffer or Uint8Array), or a readable
 * stream. A stream can be sent only once, so a request carrying one is never retried; give `size`
 * with it to send a Content-Length (the gateway then refuses an oversized upload before it starts).
 */
export type UploadData = string | Uint8Array | Readable | AsyncIterable<Uint8Array>;
export type UploadSource = UploadData | { data: UploadData; filename?: string; size?: number };

export interface UploadProgress {
  /** Bytes of the request body handed to the connection so far (this attempt). */
  loaded: number;
  /** Size of the whole request body, when known. */
  total: number | undefined;
  /** 0..100 when the total is known. */
  percent: number | undefined;
}

export type ProgressCallback = (progress: UploadProgress) => void;

export type FormField = { name: string; value: string } | { name: string; file: UploadSource };

type Chunks = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array>;

interface PreparedPart {
  header: Uint8Array;
  size: number | undefined;
  open(): Chunks;
}

/** A multipart/form-data body that can be opened once per attempt, reporting its progress. */
export interface MultipartBody {
  contentType: string;
  /** Total size in bytes, when every part's size is known. */
  length: number | undefined;
  /** False when a part is a stream (it cannot be sent a second time). */
  replayable: boolean;
  stream(onProgress?: ProgressCallback): ReadableStream<Uint8Array>;
}

const CRLF = '\r\n';
const quote = (s: string) => s.replace(/[\r\n"\\]/g, (c) => encodeURIComponent(c));

function isStreamLike(v: unknown): v is Readable | AsyncIterable<Uint8Array> {
  return typeof v === 'object' && v !== null && Symbol.asyncIterator in v;
}

async function prepareFile(
  source: UploadSource,
): Promise<{ filename: string; size?: number; open(): Chunks; replayable: boolean }> {
  const spec =
    typeof source === 'string' || source instanceof Uint8Array || isStreamLike(source)
      ? { data: source }
      : source;
  const { data } = spec;
  if (typeof data === 'string') {
    const info = await stat(data);
    if (!info.isFile()) throw new TypeError(`${data} is not a file`);
    return {
      filename: spec.filename ?? path.basename(data),
      size: info.size,
      open: () => createReadStream(data),
      replayable: true,
    };
  }
  if (data instanceof Uint8Array)
    return {
      filename: spec.filename ?? 'upload',
      size: data.byteLength,
      open: () => [data],
      replayable: true,
    };
  let used = false;
  return {
    filename: spec.filename ?? 'upload',
    size: spec.size,
    replayable: false,
    open: () => {
      if (used) throw new Error('a stream upload cannot be sent twice');
      used = true;
      return data;
    },
  };
}

/** Encodes fields and files as multipart/form-data (RFC 7578), streaming the files. */
export async function multipartBody(fields: FormField[]): Promise<MultipartBody> {
  const boundary = `----vision-sdk-${randomBytes(16).toString('hex')}`;
  const enc = new TextEncoder();
  const parts: PreparedPart[] = [];
  let replayable = true;
  for (const field of fields) {
    if ('value' in field) {
      const value = enc.encode(field.value);
      const header = `--${boundary}${CRLF}Content-Disposition: form-data; name="${quote(field.name)}"${CRLF}${CRLF}`;
      parts.push({ header: enc.encode(header), size: value.byteLength, open: () => [value] });
      continue;
    }
    const file = await prepareFile(field.file);
    replayable &&= file.replayable;
    const header =
      `--${boundary}${CRLF}Content-Disposition: form-data; name="${quote(field.name)}"; ` +
      `filename="${quote(file.filename)}"${CRLF}Content-Type: application/octet-stream${CRLF}${CRLF}`;
    parts.push({ header: enc.encode(header), size: file.size, open: file.open });
  }
  const separator = enc.encode(CRLF);
  const trailer = enc.encode(`--${boundary}--${CRLF}`);
  const sizes = parts.map((p) => (p.size === undefined ? undefined : p.header.byteLength + p.size + 2));
  const length = sizes.includes(undefined)
    ? undefined
    : sizes.reduce<number>((a, b) => a + (b ?? 0), 0) + trailer.byteLength;

  async function* chunks(): AsyncGenerator<Uint8Array> {
    for (const part of parts) {
      yield part.header;
      for await (const chunk of part.open()) yield typeof chunk === 'string' ? enc.encode(chunk) : chunk;
      yield separator;
    }
    yield trailer;
  }

  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length,
    replayable,
    stream(onProgress) {
      const it = chunks();
      let loaded = 0;
      const report = () =>
        onProgress?.({
          loaded,
          total: length,
          percent: length ? Math.min(100, Math.floor((loaded / length) * 100)) : undefined,
        });
      return new ReadableStream<Uint8Array>({
        start: () => report(),
        async pull(controller) {
          const next = await it.next();
          if (next.done) {
            controller.close();
            return;
          }
          loaded += next.value.byteLength;
          controller.enqueue(next.value);
          report();
        },
        async cancel() {
          await it.return(undefined);
        },
      });
    },
  };
}
