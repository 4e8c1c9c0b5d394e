import { ApiError, fromEnvelope } from './errors';
import { IDENTITY_HEADER, type Identity, signIdentity } from './identity';
import { REQUEST_ID_HEADER } from './http';

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  identity: Identity;
  json?: unknown;
  body?: NonNullable<RequestInit['body']>;
  headers?: Record<string, string>;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface CallResult<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
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
 * HTTP client for internal calls: signs the caller's identity, forwards the request id, bounds the
 * time. Non-2xx answers that carry our envelope are returned as results (callers decide), transport
 * failures throw UnreachableError.
 */
export class ServiceClient {
  constructor(
    readonly name: string,
    readonly baseUrl: string,
    private readonly secret: string,
    private readonly defaultTimeoutMs = 10_000,
  ) {}

  async call<T = unknown>(path: string, opts: CallOptions): Promise<CallResult<T>> {
    const headers: Record<string, string> = {
      [IDENTITY_HEADER]: signIdentity(this.secret, opts.identity),
      [REQUEST_ID_HEADER]: opts.identity.requestId,
      ...opts.headers,
    };
    let body = opts.body;
    if (opts.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.json);
    }
    const timeout = AbortSignal.timeout(opts.timeoutMs ?? this.defaultTimeoutMs);
    const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
    let res: Response;
    try {
      res = await fetch(new URL(path, this.baseUrl), {
        method: opts.method ?? (body === undefined ? 'GET' : 'POST'),
        headers,
        body,
        signal,
        ...(body !== undefined && typeof body === 'object' && 'pipe' in (body as object)
          ? { duplex: 'half' }
          : {}),
      } as RequestInit);
    } catch (err) {
      const timedOut = timeout.aborted;
      const code = (err as { cause?: { code?: string } }).cause?.code;
      // Refused or unresolved connections never delivered anything; anything else might have.
      const maybeDelivered =
        timedOut || !(code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN');
      throw new UnreachableError(
        `${this.name} ${timedOut ? 'timed out' : 'unreachable'}${code ? ` (${code})` : ''}`,
        timedOut,
        maybeDelivered,
      );
    }
    const text = await res.text();
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
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
