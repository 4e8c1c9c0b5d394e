import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { type Attributes, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { Agent, request } from 'undici';
import { DEADLINE_HEADER } from '../admission/deadline';
import { ApiError, fromEnvelope } from '../contract/errors';
import { metrics } from '../telemetry/metrics';
import { IDENTITY_HEADER, type Identity, type IdentitySigner, signIdentity } from '../identity/identity';
import { REQUEST_ID_HEADER } from '../edge/http';
import type { LocalAnswerer } from './local-calls';

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  identity: Identity;
  json?: unknown;
  body?: Buffer | string | Readable;
  headers?: Record<string, string>;
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Aborted when the caller judges the service hung (it answered nothing at all for the caller's hang bound): the
   * call ends then as one that timed out (`timeout.hung` on its span), before its own timeout.
   */
  hung?: AbortSignal;
  /**
   * The caller's deadline (epoch ms), sent on in DEADLINE_HEADER: the service called drops the work if it
   * cannot start it by then. It does not shorten this call's own timeout: a call cut short by a caller's
   * deadline is no failure of the service called (its breaker must not count it).
   */
  deadline?: number;
  /** Extra attributes of the call's span (what kind of call, where its timeout came from). */
  attributes?: Attributes;
}

export interface CallResult<T = unknown> {
  status: number;
  body: T;
  /** Response headers, names in lower case. */
  headers: IncomingHttpHeaders;
}

/** Raised when the other service could not be reached or did not answer in time. */
export class UnreachableError extends Error {
  constructor(
    message: string,
    readonly timedOut: boolean,
    /** True when the request may have reached the service (sent, then no answer). */
    readonly maybeDelivered: boolean,
  ) {
    super(message);
    this.name = 'UnreachableError';
  }
}

/**
 * Marks a call that ran out of time on its span, as the trace of an upstream timeout should read:
 * `error.type=timeout`, `timeout_ms`, and a `timeout` event.
 */
export function recordTimeout(span: Span, timeoutMs: number, upstream: string): void {
  span.setAttributes({ 'error.type': 'timeout', timeout_ms: timeoutMs });
  span.addEvent('timeout', { timeout_ms: timeoutMs, 'peer.service': upstream });
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: `${upstream} did not answer within ${timeoutMs} ms`,
  });
}

/**
 * For a call to `upstream` made other than through ServiceClient (the gateway's proxy, the stream
 * probe): a function that, when the call runs out of time, records it on the span active now
 * (recordTimeout) and, for our own services (`counted`), in vision_upstream_timeouts_total.
 */
export function timeoutRecorder(upstream: string, timeoutMs: number, counted = true): () => void {
  const span = trace.getActiveSpan();
  return () => {
    if (counted) metrics.upstreamTimeouts.inc({ upstream });
    if (span) recordTimeout(span, timeoutMs, upstream);
  };
}

/**
 * The connections of every internal call of this process (keep-alive, a pool per service). undici's
 * `request` rather than `fetch`: the same client without the WHATWG streams and Request/Response
 * objects, about a third of the CPU time per call (docs/PERFORMANCE.md, "The request path"). Its requests are
 * traced like fetch's (UndiciInstrumentation listens to undici's diagnostics channels).
 */
const internalCalls = new Agent();

/** The system or undici error code of a failed request (`ECONNREFUSED`, `UND_ERR_SOCKET`...). */
function errorCode(err: unknown): string | undefined {
  const e = err as { code?: string; cause?: { code?: string } } | undefined;
  return e?.code ?? e?.cause?.code;
}

/**
 * HTTP client for internal calls: signs the caller's identity, forwards the request id, bounds the
 * time. Non-2xx answers that carry our envelope are returned as results (callers decide), transport
 * failures throw UnreachableError. Each call is a `call <upstream>` span (the HTTP client span inside
 * it) carrying `timeout_ms` and `waited_ms`, and is measured in vision_upstream_request_duration_seconds.
 */
export class ServiceClient {
  constructor(
    /** The service called: also the audience of the identity header it signs. */
    readonly name: string,
    readonly baseUrl: string,
    /** This service's key: the identity it forwards is signed as coming from it. */
    private readonly signer: IdentitySigner,
    private readonly defaultTimeoutMs = 10_000,
    /** The service's answerer when it runs in this process (local-calls.ts): its calls skip the HTTP hop. */
    private readonly local?: LocalAnswerer,
  ) {}

  call<T = unknown>(path: string, opts: CallOptions): Promise<CallResult<T>> {
    const timeoutMs = opts.timeoutMs ?? this.defaultTimeoutMs;
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    return trace.getTracer('vision-service-client').startActiveSpan(
      `call ${this.name}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: { ...opts.attributes, 'peer.service': this.name, timeout_ms: timeoutMs },
      },
      async (span) => {
        try {
          const r = await this.send<T>(path, opts, timeoutMs);
          span.setAttribute('http.response.status_code', r.status);
          if (r.status >= 500)
            span.setStatus({ code: SpanStatusCode.ERROR, message: `answered ${r.status}` });
          metrics.upstreamDuration.observe(
            { upstream: this.name, outcome: r.status >= 500 ? 'error' : 'ok' },
            seconds(),
          );
          return r;
        } catch (err) {
          const timedOut = err instanceof UnreachableError && err.timedOut;
          if (timedOut) {
            recordTimeout(span, timeoutMs, this.name);
            if (opts.hung?.aborted) span.setAttribute('timeout.hung', true);
            metrics.upstreamTimeouts.inc({ upstream: this.name });
          } else {
            span.setAttribute('error.type', err instanceof Error ? err.name : 'Error');
            span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
          }
          metrics.upstreamDuration.observe(
            { upstream: this.name, outcome: timedOut ? 'timeout' : 'unreachable' },
            seconds(),
          );
          throw err;
        } finally {
          // How long this hop waited, answered or not: the trace of a timed-out call shows where the time went.
          span.setAttribute('waited_ms', Math.round(seconds() * 1000));
          span.end();
        }
      },
    );
  }

  private async send<T>(path: string, opts: CallOptions, timeoutMs: number): Promise<CallResult<T>> {
    const timeout = opts.hung
      ? AbortSignal.any([AbortSignal.timeout(timeoutMs), opts.hung])
      : AbortSignal.timeout(timeoutMs);
    const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
    const answer = this.local?.(path, opts, signal);
    if (answer) return this.answeredHere<T>(answer, signal, timeout);
    const url = new URL(path, this.baseUrl);
    const method = opts.method ?? (opts.body === undefined && opts.json === undefined ? 'GET' : 'POST');
    // The header is bound to this request: the method and the target exactly as they are sent.
    const call = { method, target: `${url.pathname}${url.search}` };
    const headers: Record<string, string> = {
      [IDENTITY_HEADER]: signIdentity(this.signer, opts.identity, this.name, call),
      [REQUEST_ID_HEADER]: opts.identity.requestId,
      ...(opts.deadline !== undefined ? { [DEADLINE_HEADER]: String(opts.deadline) } : {}),
      ...opts.headers,
    };
    let body = opts.body;
    if (opts.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.json);
    }
    let status: number;
    let resHeaders: IncomingHttpHeaders;
    let text: string;
    // A refused connection delivered nothing: sent once more at once, on a new connection, which a Kubernetes
    // Service gives to another endpoint (a pod that stopped listening before the endpoints forgot it, in a
    // rollout). A body that is a stream is not sent twice.
    const attempts = body === undefined || typeof body === 'string' || Buffer.isBuffer(body) ? 2 : 1;
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await request(url, { method, headers, body, signal, dispatcher: internalCalls });
        status = res.statusCode;
        resHeaders = res.headers;
        text = await res.body.text();
        break;
      } catch (err) {
        if (attempt < attempts && !signal.aborted && errorCode(err) === 'ECONNREFUSED') continue;
        throw this.unreachable(err, timeout);
      }
    }
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    return { status, body: parsed as T, headers: resHeaders };
  }

  /** The UnreachableError of a call that failed in transport (`timeout`: the call's own timeout signal). */
  private unreachable(err: unknown, timeout: AbortSignal): UnreachableError {
    const timedOut = timeout.aborted;
    const code = timedOut ? undefined : errorCode(err);
    // Refused or unresolved connections never delivered anything; anything else might have.
    const maybeDelivered =
      timedOut || !(code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN');
    return new UnreachableError(
      `${this.name} ${timedOut ? 'timed out' : 'unreachable'}${code ? ` (${code})` : ''}`,
      timedOut,
      maybeDelivered,
    );
  }

  /**
   * An answer given in this process, bounded as an HTTP call is: when the timeout passes or the caller gives
   * up first, the call fails as one that was sent and not answered, and `signal` tells the answerer (a call still
   * waiting for its turn leaves the queue).
   */
  private async answeredHere<T>(
    answer: Promise<CallResult>,
    signal: AbortSignal,
    timeout: AbortSignal,
  ): Promise<CallResult<T>> {
    void answer.catch(() => undefined); // its failure after an abort is nobody's to handle
    let onAbort = (): void => undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () =>
        reject(
          new UnreachableError(
            `${this.name} ${timeout.aborted ? 'timed out' : 'unreachable'}`,
            timeout.aborted,
            true,
          ),
        );
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return (await Promise.race([answer, aborted])) as CallResult<T>;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Like call(), but a non-2xx answer throws the ApiError it carries, and an unreachable service
   * throws OP-SYS-UNAVAILABLE.
   */
  async request<T = unknown>(path: string, opts: CallOptions): Promise<CallResult<T>> {
    let r: CallResult<T>;
    try {
      r = await this.call<T>(path, opts);
    } catch (err) {
      if (err instanceof UnreachableError)
        throw new ApiError('OP-SYS-UNAVAILABLE', `A dependency is unavailable (${this.name}), retry later`);
      throw err;
    }
    if (r.status >= 200 && r.status < 300) return r;
    throw (
      fromEnvelope(r.status, r.body) ??
      new ApiError('OP-SYS-UNAVAILABLE', `${this.name} answered ${r.status}`, { upstream_status: r.status })
    );
  }
}
