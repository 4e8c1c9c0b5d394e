import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
import {
  ApiError,
  REASON,
  awaitDrain,
  endAfterBody,
  sendContinue,
  sendError,
  setEarlyAnswerLimits,
  timeoutRecorder,
  type Logger,
} from '@vision/shared';
import { ByteCap, clientHeaders, isBodiless, upstreamHeaders } from './forward-headers';

export { ByteCap, dropHopByHopHeaders, isBodiless } from './forward-headers';

export interface ProxyTarget {
  url: string;
  name: string;
}

export interface ForwarderOptions {
  /** An upstream that sends nothing for this long (no answer, or a stalled answer) is abandoned: 503. */
  timeoutMs: number;
  /** Keep-alive connections per upstream for requests without a body; more wait in FIFO order. */
  pooledSockets: number;
  /** An upload that sends no byte for this long is cut; its upstream request is aborted. */
  uploadIdleMs: number;
  /** An event stream whose client took nothing for this long, the buffers on the way full, is closed. */
  streamStallMs: number;
  /** Sees each upstream answer's head (before it is relayed): the door reads the load reports. */
  onAnswer?: (target: ProxyTarget, headers: Dispatcher.ResponseData['headers']) => void;
}

/** A free pooled connection is closed after this long, before the upstream's own 5 s keep-alive timeout. */
const POOL_IDLE_MS = 4000;

export interface Forwarder {
  (req: IncomingMessage, res: ServerResponse, target: ProxyTarget, maxBodyBytes: number): void;
  /** Requests waiting for a connection now, by upstream origin (undici's pool statistics). */
  queued(): Map<string, number>;
  /** Closes the upstream connections. */
  close(): void;
}

/** An answer of Server-Sent Events (`text/event-stream`). */
const isEventStream = (headers: Dispatcher.ResponseData['headers']): boolean =>
  String(headers['content-type'] ?? '').startsWith('text/event-stream');

/** Errors undici raises when a connection it reused turned out closed before any answer came. */
const STALE_CONNECTION = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'UND_ERR_CLOSED']);
const TIMED_OUT = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * Streams a request to an upstream service and its answer back, through undici. Bodies are piped with
 * backpressure (never buffered); a body over `maxBodyBytes` is cut off and answered 400. Only a failure
 * to reach the upstream or a silent upstream answers 503 OP-SYS-UNAVAILABLE: an upstream that answered,
 * even before it had read the whole body (a refusal), has its answer relayed as it is, by the rule of
 * early-answer.ts (the rest of the client's body is read and discarded, the connection closes only after).
 *
 * Requests without a body travel on a bounded pool of keep-alive connections per upstream: no TCP
 * set-up per read, and when every pooled connection is busy the next request waits its turn (FIFO).
 * Uploads use a second, unbounded set of keep-alive connections: a long upload never holds a pooled
 * connection, and the upstream never sees a `Connection: close` that would make it close over a body
 * still arriving.
 */
export function createForwarder(logger: Logger, opts: ForwarderOptions): Forwarder {
  const { timeoutMs } = opts;
  const pool = new Agent({
    connections: opts.pooledSockets,
    keepAliveTimeout: POOL_IDLE_MS,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  // No headers timeout: undici's would run while a slow upload is still being sent. The forwarder
  // times the wait for an answer itself, from the moment the whole body has been passed on.
  const uploads = new Agent({ keepAliveTimeout: POOL_IDLE_MS, headersTimeout: 0, bodyTimeout: timeoutMs });

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
   * An upstream answer nobody will read. Destroying an unfinished undici body emits its RequestAbortedError: that is
   * this call's own doing, and without a listener it would be thrown out of the event loop.
   */
  const discard = (body: Dispatcher.ResponseData['body']): void => {
    body.on('error', () => undefined).destroy();
  };

  /** Relays an upstream's answer; the response ends once the client's body has ended too. */
  const relay = (
    req: IncomingMessage,
    res: ServerResponse,
    target: ProxyTarget,
    up: Dispatcher.ResponseData,
  ): void => {
    opts.onAnswer?.(target, up.headers);
    if (res.destroyed || res.headersSent) return discard(up.body);
    res.writeHead(up.statusCode, clientHeaders(up.headers));
    if (isEventStream(up.headers)) relayStream(res, up);
    else {
      up.body.on('data', (chunk: Buffer) => {
        if (!res.write(chunk)) up.body.pause();
      });
      res.on('drain', () => up.body.resume());
    }
    up.body.once('end', () => endAfterBody(req, res));
    up.body.once('error', () => res.destroy());
    res.once('close', () => up.body.destroy());
  };

  /**
   * An event stream (SSE) relayed with back-pressure; a client that takes nothing for `streamStallMs` while the
   * gateway's buffers towards it are full has stopped reading: the stream is closed, upstream and client
   * (docs/CONNECTIONS.md, "Streams whose reader stopped reading").
   */
  const relayStream = (res: ServerResponse, up: Dispatcher.ResponseData): void => {
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    up.body.on('data', (chunk: Buffer) => {
      if (res.write(chunk)) return;
      up.body.pause();
      void awaitDrain(res, opts.streamStallMs, gone.signal).then((outcome) => {
        if (outcome === 'drained') return void up.body.resume();
        if (outcome !== 'stalled') return;
        logger.info({ stall_ms: opts.streamStallMs }, 'closing an event stream whose client stopped reading');
        res.destroy();
      });
    });
  };

  const forwardBodiless = (req: IncomingMessage, res: ServerResponse, target: ProxyTarget) => {
    const idempotent = req.method === 'GET' || req.method === 'HEAD';
    const headers = upstreamHeaders(req);
    const ac = new AbortController();
    res.once('close', () => ac.abort());
    const timeout = timeoutRecorder(target.name, timeoutMs);
    req.resume(); // nothing to read: let 'end' happen
    const attempt = (first: boolean) => {
      pool
        .request({
          origin: target.url,
          path: req.url ?? '/',
          method: req.method as Dispatcher.HttpMethod,
          headers,
          signal: ac.signal,
        })
        .then(
          (up) => relay(req, res, target, up),
          (err: NodeJS.ErrnoException) => {
            if (ac.signal.aborted || res.destroyed) return;
            // A pooled connection the upstream had closed as the request went out: nothing reached its handler,
            // and a read may be sent once more. A refused connection reached nothing, whatever the method: sent
            // once more on a new one (in a rollout, the Service gives it to another endpoint).
            const code = err.code ?? '';
            if (first && (code === 'ECONNREFUSED' || (idempotent && STALE_CONNECTION.has(code)))) {
              logger.debug({ upstream: target.name, code }, 'connection closed or refused; retrying once');
              return attempt(false);
            }
            if (TIMED_OUT.has(err.code ?? '')) timeout();
            answer(res, upstreamFailed(target, err));
          },
        );
    };
    attempt(true);
  };

  const forwardUpload = (
    req: IncomingMessage,
    res: ServerResponse,
    target: ProxyTarget,
    maxBodyBytes: number,
  ) => {
    setEarlyAnswerLimits(req, { bound: maxBodyBytes, idleMs: opts.uploadIdleMs });
    const cap = new ByteCap(maxBodyBytes);
    const ac = new AbortController();
    let settled = false;
    let idle: NodeJS.Timeout | undefined;
    let waiting: NodeJS.Timeout | undefined;
    const timeout = timeoutRecorder(target.name, timeoutMs);
    const stop = () => {
      settled = true;
      clearTimeout(idle);
      clearTimeout(waiting);
    };
    /** Refuses the request before the upstream answered: the upstream drops what it got. */
    const fail = (err: ApiError) => {
      if (settled) return;
      stop();
      req.unpipe(cap);
      ac.abort();
      answer(res, err);
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
      );
    };
    const arm = () => {
      clearTimeout(idle);
      if (!settled) idle = setTimeout(stalled, opts.uploadIdleMs);
    };
    req.on('data', arm);
    req.once('end', () => {
      clearTimeout(idle);
      if (settled) return;
      // The whole body is on its way: the upstream has timeoutMs to answer.
      waiting = setTimeout(() => {
        timeout();
        fail(upstreamFailed(target, Object.assign(new Error('no answer in time'), { code: 'ETIMEDOUT' })));
      }, timeoutMs);
    });
    req.on('error', () => undefined);
    // The client went away before its answer: the upstream request is aborted, nothing is answered.
    res.once('close', () => {
      if (!res.writableFinished) {
        stop();
        ac.abort();
      }
    });
    arm();
    cap.on('error', () => {
      if (cap.exceeded)
        fail(
          new ApiError('OP-TASK-REQUEST-INVALID', `Request body exceeds ${maxBodyBytes} bytes`, {
            reason: 'body_too_large',
            limit_bytes: maxBodyBytes,
          }),
        );
    });
    req.pipe(cap);
    uploads
      .request({
        origin: target.url,
        path: req.url ?? '/',
        method: req.method as Dispatcher.HttpMethod,
        headers: upstreamHeaders(req),
        body: cap,
        signal: ac.signal,
      })
      .then(
        (up) => {
          if (settled) return discard(up.body);
          stop();
          // An answer before the whole body (a refusal): nothing more goes upstream, the rest is discarded.
          req.unpipe(cap);
          relay(req, res, target, up);
        },
        (err: NodeJS.ErrnoException) => {
          if (settled || ac.signal.aborted) return;
          fail(upstreamFailed(target, err));
        },
      );
  };

  const forward = function forward(
    req: IncomingMessage,
    res: ServerResponse,
    target: ProxyTarget,
    maxBodyBytes: number,
  ): void {
    // A caller that left while its call was checked (its key, its rate) or waited at the door: nothing goes upstream.
    if (res.destroyed) return void req.resume();
    // Admitted: a client waiting for `100 Continue` may send its body now.
    sendContinue(req, res);
    if (isBodiless(req.headers)) forwardBodiless(req, res, target);
    else forwardUpload(req, res, target, maxBodyBytes);
  };
  return Object.assign(forward, {
    queued: () => {
      const out = new Map<string, number>();
      for (const agent of [pool, uploads])
        for (const [origin, stats] of Object.entries(agent.stats))
          out.set(origin, (out.get(origin) ?? 0) + ('queued' in stats ? stats.queued : stats.pending));
      return out;
    },
    close: () => {
      void pool.destroy().catch(() => undefined);
      void uploads.destroy().catch(() => undefined);
    },
  });
}
