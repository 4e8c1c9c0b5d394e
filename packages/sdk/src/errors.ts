import type { ErrorCode, Task } from './types';

/** A structured error answer of the service (SPEC.md section 7), or an HTTP error without our envelope. */
export class VisionApiError extends Error {
  override readonly name = 'VisionApiError';
  constructor(
    /** HTTP status of the answer. */
    readonly status: number,
    /** The error code, e.g. `OP-QUOTA-DAILY-EXHAUSTED`; `HTTP-<status>` when the body had no envelope. */
    readonly code: ErrorCode | `HTTP-${number}`,
    message: string,
    /** `error.details` of the answer (e.g. `{ reason: 'stream_unreachable' }`), or `{}`. */
    readonly details: Record<string, unknown>,
    /** The request id (`error.request_id` or the `X-Request-Id` header), for support and traces. */
    readonly requestId: string | undefined,
  ) {
    super(message);
  }

  /** `details.reason` when the service gave one. */
  get reason(): string | undefined {
    return typeof this.details.reason === 'string' ? this.details.reason : undefined;
  }
}

/** The service could not be reached (or did not answer in time) after every retry. */
export class VisionNetworkError extends Error {
  override readonly name = 'VisionNetworkError';
  constructor(
    message: string,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** `waitForTask` ran out of time; `task` is the last state seen. */
export class VisionTimeoutError extends Error {
  override readonly name = 'VisionTimeoutError';
  constructor(
    message: string,
    readonly task: Task | undefined,
  ) {
    super(message);
  }
}

/** Builds the typed error of a non-2xx answer from its body (parsed JSON or text). */
export function errorFromResponse(status: number, headers: Headers, body: unknown): VisionApiError {
  const envelope = (body as { error?: Record<string, unknown> } | null)?.error;
  const requestId = headers.get('x-request-id') ?? undefined;
  if (envelope && typeof envelope.code === 'string') {
    const details =
      envelope.details && typeof envelope.details === 'object'
        ? (envelope.details as Record<string, unknown>)
        : {};
    return new VisionApiError(
      status,
      envelope.code as ErrorCode,
      typeof envelope.message === 'string' ? envelope.message : envelope.code,
      details,
      typeof envelope.request_id === 'string' ? envelope.request_id : requestId,
    );
  }
  const text = typeof body === 'string' ? body.slice(0, 200) : '';
  return new VisionApiError(
    status,
    `HTTP-${status}`,
    `HTTP ${status}${text ? `: ${text}` : ''}`,
    {},
    requestId,
  );
}

/** A body as JSON when it is JSON, else the text itself (error bodies of proxies are not always JSON). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
