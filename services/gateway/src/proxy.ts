import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import httpProxy from 'http-proxy';
import { ApiError, sendError, type Logger } from '@vision/shared';

/** Counts bytes flowing through and fails once more than `limit` have passed. */
export class ByteCap extends Transform {
  private seen = 0;
  exceeded = false;
  constructor(private readonly limit: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.limit) {
      this.exceeded = true;
      cb(new Error('request body exceeds the limit'));
      return;
    }
    cb(null, chunk);
  }
}

export interface ProxyTarget {
  url: string;
  name: string;
}

/**
 * Streams a request to an upstream service and its answer back. Bodies are piped with backpressure
 * (never buffered); a body over `maxBodyBytes` is cut off and answered 400 if nothing was sent yet.
 * An unreachable upstream answers 503 OP-SYS-UNAVAILABLE.
 */
export function createForwarder(logger: Logger, timeoutMs: number) {
  const proxy = httpProxy.createProxyServer({
    xfwd: true,
    proxyTimeout: timeoutMs,
    timeout: timeoutMs,
    ws: false,
    changeOrigin: false,
  });

  return function forward(
    req: IncomingMessage,
    res: ServerResponse,
    target: ProxyTarget,
    maxBodyBytes: number,
  ): void {
    const cap = new ByteCap(maxBodyBytes);
    let failed = false;
    const fail = (err: ApiError) => {
      if (failed) return;
      failed = true;
      // Express' response carries locals (request id) and the envelope helpers.
      sendError(res as Parameters<typeof sendError>[0], err);
      req.unpipe(cap);
      req.resume();
    };
    cap.on('error', () => {
      if (cap.exceeded) {
        fail(
          new ApiError('OP-TASK-REQUEST-INVALID', `Request body exceeds ${maxBodyBytes} bytes`, {
            reason: 'body_too_large',
            limit_bytes: maxBodyBytes,
          }),
        );
      }
    });
    req.pipe(cap);
    proxy.web(req, res, { target: target.url, buffer: cap }, (err: NodeJS.ErrnoException) => {
      if (cap.exceeded) return; // already answered above
      logger.warn({ upstream: target.name, code: err.code, msg: err.message }, 'upstream call failed');
      fail(new ApiError('OP-SYS-UNAVAILABLE', `The ${target.name} service is unavailable, retry later`));
    });
  };
}
