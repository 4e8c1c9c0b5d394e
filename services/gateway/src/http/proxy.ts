import { Agent, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import httpProxy from 'http-proxy';
import { ApiError, REASON, sendError, timeoutRecorder, type Logger } from '@vision/shared';

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

export interface ForwarderOptions {
  /** An idle upstream connection is abandoned after this long. */
  timeoutMs: number;
  /** Keep-alive connections per upstream for requests without a body; more wait in FIFO order. */
  pooledSockets: number;
  /** An upload that sends no byte for this long is cut; its upstream request is aborted. */
  uploadIdleMs: number;
}

/** A free pooled connection is closed after this long, before the upstream's own 5 s keep-alive timeout. */
const POOL_IDLE_MS = 4000;

/** True when a request carries no body (reads, deletes, bodiless POSTs): it can share a pooled connection. */
export function isBodiless(headers: IncomingMessage['headers']): boolean {
  if (headers['transfer-encoding'] !== undefined) return false;
  const length = headers['content-length'];
  return length === undefined || Number(length) === 0;
}

/**
 * Removes the hop-by-hop headers of the client's connection (RFC 9110 7.6.1): a client's
 * `Connection: close` must not close a pooled upstream connection.
 */
export function dropHopByHopHeaders(headers: IncomingMessage['headers']): void {
  const named = String(headers.connection ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  for (const h of ['connection', 'keep-alive', 'proxy-connection', 'te', 'upgrade', ...named])
    delete headers[h];
}

export interface Forwarder {
  (req: IncomingMessage, res: ServerResponse, target: ProxyTarget, maxBodyBytes: number): void;
  /** Closes the pooled connections. */
  close(): void;
}

/**
 * Streams a request to an upstream service and its answer back. Bodies are piped with backpressure
 * (never buffered); a body over `maxBodyBytes` is cut off and answered 400 if nothing was sent yet.
 * An unreachable upstream answers 503 OP-SYS-UNAVAILABLE.
 *
 * Requests without a body travel on a bounded pool of keep-alive connections per upstream: no TCP
 * set-up per read, and when every pooled connection is busy the next request waits its turn (FIFO)
 * instead of opening a new connection, which a busy upstream accepts late (Node accepts about one
 * new connection per event-loop turn, so fresh connections starve behind warm ones). Uploads get a
 * connection of their own: a long upload never holds a pooled connection.
 */
export function createForwarder(logger: Logger, opts: ForwarderOptions): Forwarder {
  const { timeoutMs } = opts;
  const pool = new Agent({
    keepAlive: true,
    maxSockets: opts.pooledSockets,
    timeout: POOL_IDLE_MS,
  });
  const proxy = httpProxy.createProxyServer({
    xfwd: true,
    // Only the upstream request is bounded: http-proxy's `timeout` would destroy the client's socket
    // at the same moment, so the client got a closed connection instead of the 503.
    proxyTimeout: timeoutMs,
    ws: false,
    changeOrigin: false,
  });

  // The upstream request of each client request (the latest attempt), its upstream, and the ones that timed out.
  const upstreamOf = new WeakMap<IncomingMessage, ClientRequest>();
  const targetOf = new WeakMap<IncomingMessage, string>();
  const timedOut = new WeakSet<IncomingMessage>();
  proxy.on('proxyReq', (proxyReq: ClientRequest, req: IncomingMessage) => {
    upstreamOf.set(req, proxyReq);
    // A timeout is counted and recorded on the request's server span (error.type=timeout, timeout_ms, event).
    const timeout = timeoutRecorder(targetOf.get(req) ?? 'upstream', timeoutMs);
    proxyReq.once('timeout', () => {
      timedOut.add(req);
      timeout();
    });
  });

  /** Logs an upstream failure; the error the client gets for it. */
  const upstreamFailed = (target: ProxyTarget, err: NodeJS.ErrnoException) => {
    logger.warn({ upstream: target.name, code: err.code, error: err.message }, 'upstream call failed');
    return new ApiError('OP-SYS-UNAVAILABLE', `The ${target.name} service is unavailable, retry later`);
  };
  /** Answers with the error envelope, or cuts the response when its head already went out. */
  const answer = (res: ServerResponse, err: ApiError) => {
    if (res.headersSent) return void res.destroy();
    // Express' response carries locals (request id) and the envelope helpers.
    sendError(res as Parameters<typeof sendError>[0], err);
  };

  /**
   * A request without a body, on the pool. A GET or HEAD whose pooled connection turns out closed by
   * the upstream (it closed an idle connection, or is shutting down, as the request went out) is sent
   * once more on a fresh connection: nothing reached the upstream's handler, and reads are idempotent.
   * A timeout is never retried.
   */
  const forwardPooled = (req: IncomingMessage, res: ServerResponse, target: ProxyTarget, retry: boolean) => {
    // Each attempt adds X-Forwarded-* to the headers: a retry starts again from the client's.
    const headers = retry ? { ...req.headers } : undefined;
    proxy.web(
      req,
      res,
      { target: target.url, agent: pool, buffer: Readable.from([]) },
      (err: NodeJS.ErrnoException) => {
        const stale =
          upstreamOf.get(req)?.reusedSocket === true &&
          !timedOut.has(req) &&
          !res.headersSent &&
          !res.destroyed &&
          !req.socket.destroyed;
        if (headers && stale) {
          logger.debug(
            { upstream: target.name, code: err.code },
            'pooled connection was closed; retrying once',
          );
          req.headers = headers;
          return forwardPooled(req, res, target, false);
        }
        answer(res, upstreamFailed(target, err));
      },
    );
  };

  const forward = function forward(
    req: IncomingMessage,
    res: ServerResponse,
    target: ProxyTarget,
    maxBodyBytes: number,
  ): void {
    targetOf.set(req, target.name);
    if (isBodiless(req.headers)) {
      dropHopByHopHeaders(req.headers);
      req.resume(); // nothing to read: let 'end' happen
      forwardPooled(req, res, target, req.method === 'GET' || req.method === 'HEAD');
      return;
    }
    const cap = new ByteCap(maxBodyBytes);
    let failed = false;
    let idle: NodeJS.Timeout | undefined;
    const fail = (err: ApiError, closeClient = false) => {
      if (failed) return;
      failed = true;
      clearTimeout(idle);
      // The upstream must not wait for the rest of a body that will never come: it drops what it got.
      upstreamOf.get(req)?.destroy();
      if (closeClient) {
        res.setHeader('Connection', 'close');
        res.once('finish', () => req.socket.destroy());
      }
      answer(res, err);
      req.unpipe(cap);
      req.resume();
    };
    // A slow but steady upload may take as long as it needs; one that stops sending is cut.
    const stalled = () => {
      // Paused by backpressure (the upstream reads slowly): the client is not the one stalling.
      if (req.isPaused()) return arm();
      logger.info({ upstream: target.name, idle_ms: opts.uploadIdleMs }, 'upload stalled; cut');
      fail(
        new ApiError('OP-TASK-REQUEST-INVALID', `The upload sent nothing for ${opts.uploadIdleMs} ms`, {
          reason: REASON.upload_stalled,
          idle_ms: opts.uploadIdleMs,
        }),
        true,
      );
    };
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(stalled, opts.uploadIdleMs);
    };
    req.on('data', arm);
    req.once('end', () => clearTimeout(idle));
    req.once('close', () => clearTimeout(idle));
    arm();
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
    proxy.web(req, res, { target: target.url, buffer: cap, agent: false }, (err: NodeJS.ErrnoException) => {
      if (cap.exceeded || failed) return; // already answered above
      fail(upstreamFailed(target, err));
    });
  };
  return Object.assign(forward, { close: () => pool.destroy() });
}
