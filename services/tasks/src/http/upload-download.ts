/**
 * `GET /v1/vision/tasks/{task_id}/video` (an extension beyond SPEC.md): streams the video a file task
 * was created from back to its owner, with HTTP Range support so that a browser's <video> can seek.
 * Another subject's task, a stream task, an image call record and an expired task all answer 404.
 */
import type { Express, Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import {
  ApiError,
  ObjectNotFoundError,
  type ByteRange,
  type ObjectStore,
  requestIdOf,
  route,
  toEnvelope,
} from '@vision/shared';
import { SNIFF_BYTES, sniffVideoContainer } from '../domain/ftyp';
import type { TaskStore } from '../store/task-store';
import { ownTask } from './own-task';

export interface UploadDownloadDeps {
  store: TaskStore;
  objects: ObjectStore;
}

export const UPLOAD_DOWNLOAD_PATH = '/v1/vision/tasks/:task_id/video';

const CONTENT_TYPES = { mp4: 'video/mp4', mov: 'video/quicktime' } as const;

const gone = () => new ApiError('OP-NOT-FOUND', 'This task has no stored upload');

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c));
  return Buffer.concat(chunks);
}

/**
 * The one range to send: undefined for the whole object (no Range header, an If-Range that does not
 * match, or several ranges, which RFC 9110 lets a server ignore), 'unsatisfiable' for a range that
 * starts past the end. A malformed Range header is ignored, as RFC 9110 says.
 */
function wantedRange(req: Request, size: number, etag: string): ByteRange | 'unsatisfiable' | undefined {
  if (!req.headers.range) return undefined;
  const ifRange = req.header('if-range');
  if (ifRange !== undefined && ifRange !== etag) return undefined;
  const ranges = req.range(size, { combine: true });
  if (ranges === -1) return 'unsatisfiable';
  if (ranges === -2 || ranges === undefined || ranges.length !== 1 || ranges.type !== 'bytes')
    return undefined;
  return { start: ranges[0].start, end: ranges[0].end };
}

export function mountUploadDownload(app: Express, d: UploadDownloadDeps): void {
  const handler = route(async (req: Request, res: Response) => {
    const task = await ownTask(d.store, req, res);
    if (task.kind !== 'video' || task.source_type !== 'file' || !task.object_key) throw gone();
    const key = task.object_key;
    const info = await d.objects.stat(key);
    if (!info) throw gone();
    const size = info.size;
    const etag = `"${task.object_sha256 ?? `${size}-${info.lastModified.getTime()}`}"`;
    const open = (r?: ByteRange) =>
      d.objects.get(key, r).catch((err: unknown) => {
        throw err instanceof ObjectNotFoundError ? gone() : err;
      });
    const head =
      size > 0
        ? await readAll(await open({ start: 0, end: Math.min(size, SNIFF_BYTES) - 1 }))
        : Buffer.alloc(0);
    const container = sniffVideoContainer(head) ?? 'mp4';

    res.setHeader('Accept-Ranges', 'bytes');
    res.setHeader('ETag', etag);
    res.setHeader('Last-Modified', info.lastModified.toUTCString());
    res.setHeader('Cache-Control', 'private, no-cache');
    res.setHeader('Content-Type', CONTENT_TYPES[container]);
    res.setHeader('Content-Disposition', `inline; filename="${task.task_id}.${container}"`);
    res.setHeader('X-Content-Type-Options', 'nosniff');

    const range = wantedRange(req, size, etag);
    if (range === 'unsatisfiable') {
      res.removeHeader('Content-Type');
      res.removeHeader('Content-Disposition');
      res.setHeader('Content-Range', `bytes */${size}`);
      const err = new ApiError('OP-TASK-REQUEST-INVALID', `Range is outside the file (${size} bytes)`, {
        reason: 'range_not_satisfiable',
        size,
      });
      res.status(416).json(toEnvelope(err, requestIdOf(res)));
      return;
    }
    if (range) {
      res.status(206);
      res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
      res.setHeader('Content-Length', String(range.end - range.start + 1));
    } else {
      res.status(200);
      res.setHeader('Content-Length', String(size));
    }
    if (req.method === 'HEAD' || size === 0) {
      res.end();
      return;
    }
    const body = await open(range);
    // Headers are out once bytes flow: a failure after that ends the connection (sendError destroys it).
    await pipeline(body, res).catch((err: unknown) => {
      if (!res.writableFinished) res.destroy(err instanceof Error ? err : undefined);
    });
  });
  app.get(UPLOAD_DOWNLOAD_PATH, handler);
}
