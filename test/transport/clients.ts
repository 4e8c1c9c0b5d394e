import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { promisify } from 'node:util';
import { VisionApiError, VisionClient, type SceneCode } from '@vision/sdk';

const run = promisify(execFile);
const MiB = 1024 * 1024;

/** One multipart upload: value fields first, then `count` files of `size` bytes each, read from `path`. */
export interface Upload {
  base: string;
  route: string;
  key: string;
  idempotencyKey: string;
  fields: Record<string, string>;
  /** The file field's name: `files` for images, `file` for video. */
  fileField: string;
  /** A file of `size` bytes (sparse: it reads as zeros and takes no disk). */
  path: string;
  size: number;
  count: number;
}

/** What a client read back: the status, and the error envelope's code and reason. */
export interface Read {
  status: number;
  code?: string;
  reason?: string;
}

const fromBody = (status: number, text: string): Read => {
  const e = (JSON.parse(text) as { error?: { code?: string; details?: { reason?: string } } }).error;
  return { status, code: e?.code, reason: e?.details?.reason };
};

/** curl: streams the file part from disk and reads the answer as soon as it comes. */
export async function curlUpload(u: Upload): Promise<Read> {
  const form = Object.entries(u.fields).flatMap(([k, v]) => ['-F', `${k}=${v}`]);
  const { stdout } = await run(
    'curl',
    [
      '-sS',
      '-H',
      `Authorization: Bearer ${u.key}`,
      '-H',
      `Idempotency-Key: ${u.idempotencyKey}`,
      ...form,
      ...Array.from({ length: u.count }, () => [
        '-F',
        `${u.fileField}=@${u.path};type=application/octet-stream`,
      ]).flat(),
      '-w',
      '\n%{http_code}',
      `${u.base}${u.route}`,
    ],
    { maxBuffer: 4 * MiB },
  );
  const lines = stdout.trim().split('\n');
  return fromBody(Number(lines.pop()), lines.join('\n'));
}

/** Python requests: builds the whole body, sends all of it, then reads. */
export async function pythonUpload(u: Upload): Promise<Read> {
  const script = [
    'import json, sys, requests',
    'a = json.loads(sys.argv[1])',
    "files = [(a['fileField'], ('upload.bin', open(a['path'], 'rb'), 'application/octet-stream')) for _ in range(a['count'])]",
    "r = requests.post(a['url'], headers={'Authorization': 'Bearer ' + a['key'], 'Idempotency-Key': a['idem']},",
    "                  data=a['fields'], files=files, timeout=120)",
    'print(r.status_code)',
    'print(r.text)',
  ].join('\n');
  const args = { ...u, url: `${u.base}${u.route}`, idem: u.idempotencyKey };
  const { stdout } = await run('python3', ['-c', script, JSON.stringify(args)], { maxBuffer: 4 * MiB });
  const [status, ...body] = stdout.trim().split('\n');
  return fromBody(Number(status), body.join('\n'));
}

/** The multipart body of `u`, streamed from a generator in 1 MiB chunks read from its file (nothing held whole). */
function streamedForm(u: Upload): {
  contentType: string;
  length: number;
  chunks: () => AsyncGenerator<Buffer>;
} {
  const boundary = 'transport-stream-91e2';
  const fields = Object.entries(u.fields)
    .map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
    .join('');
  const fileHead = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${u.fileField}"; filename="upload.bin"\r\n` +
      `Content-Type: application/octet-stream\r\n\r\n`,
  );
  const end = Buffer.from(`--${boundary}--\r\n`);
  const { size, count } = u;
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: Buffer.byteLength(fields) + count * (fileHead.length + size + 2) + end.length,
    async *chunks() {
      yield Buffer.from(fields);
      for (let n = 0; n < count; n++) {
        yield fileHead;
        for await (const chunk of createReadStream(u.path, { highWaterMark: MiB })) yield chunk as Buffer;
        yield Buffer.from('\r\n');
      }
      yield end;
    },
  };
}

/** Node's fetch (undici): a body streamed from a generator; it reads the answer as soon as it comes. */
export async function fetchUpload(u: Upload): Promise<Read> {
  const form = streamedForm(u);
  const res = await fetch(`${u.base}${u.route}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${u.key}`,
      'idempotency-key': u.idempotencyKey,
      'content-type': form.contentType,
      'content-length': String(form.length),
    },
    body: ReadableStream.from(form.chunks()),
    duplex: 'half',
  } as RequestInit);
  return fromBody(res.status, await res.text());
}

/**
 * Our SDK: the images as paths, the video as a sized stream of its file; it sends only the fields
 * the API knows (`scene_code` and the file), so `fields` may hold nothing else.
 */
export async function sdkUpload(u: Upload): Promise<Read> {
  const client = new VisionClient({ baseUrl: u.base, apiKey: u.key, retry: { retries: 0 } });
  const unknown = Object.keys(u.fields).filter((k) => k !== 'scene_code');
  if (unknown.length) throw new Error(`the SDK cannot send the fields ${unknown.join(', ')}`);
  const scene = u.fields.scene_code as SceneCode | undefined;
  const opts = { idempotencyKey: u.idempotencyKey, ...(scene ? { scene } : {}) };
  try {
    if (u.fileField === 'files') await client.detectImages(Array<string>(u.count).fill(u.path), opts);
    else
      await client.createFileTask(
        {
          file: { data: createReadStream(u.path, { highWaterMark: MiB }), size: u.size, filename: 'v.mp4' },
          scene,
        },
        opts,
      );
    return { status: 200 };
  } catch (err) {
    if (!(err instanceof VisionApiError)) throw err;
    return { status: err.status, code: err.code, reason: err.reason };
  }
}
