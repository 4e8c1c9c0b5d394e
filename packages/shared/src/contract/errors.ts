import type { Reason } from './reasons';

/** Error codes of SPEC.md section 7 with their HTTP statuses, and the JSON envelope every service answers with. */
export const ERROR_STATUS = {
  'OP-AUTH-REQUIRED': 401,
  'OP-TASK-REQUEST-INVALID': 400,
  'OP-TASK-SCENE-UNAVAILABLE': 400,
  'OP-QUOTA-DAILY-EXHAUSTED': 429,
  'OP-QUOTA-RATE-LIMITED': 429,
  'OP-TASK-UPSTREAM-DOWN': 503,
  'OP-TASK-BREAKER-OPEN': 503,
  'OP-SYS-UNAVAILABLE': 503,
  'OP-TASK-NOT-STOPPABLE': 409,
  'OP-TASK-NO-PICTURE': 409,
  'OP-TASK-NO-SNAPSHOT': 404,
  'OP-TASK-ENDED': 409,
  'OP-NOT-FOUND': 404,
  'OP-METHOD-NOT-ALLOWED': 405,
  'OP-SYS-INTERNAL': 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** `reason`, when present, is one of the closed vocabulary in reasons.ts. */
export interface ErrorDetails {
  reason?: Reason;
  [key: string]: unknown;
}

export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; details?: ErrorDetails; request_id: string };
}

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
    /** Extra response headers, for example Retry-After. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }
}

export const invalidRequest = (message: string, reason: Reason, details?: ErrorDetails): ApiError =>
  new ApiError('OP-TASK-REQUEST-INVALID', message, { reason, ...details });

export const notFound = (message = 'Not found'): ApiError => new ApiError('OP-NOT-FOUND', message);

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_STATUS, value);
}

export function toEnvelope(err: ApiError, requestId: string): ErrorEnvelope {
  const body: ErrorEnvelope = { error: { code: err.code, message: err.message, request_id: requestId } };
  if (err.details && Object.keys(err.details).length > 0) body.error.details = err.details;
  return body;
}

/** Reads an error envelope returned by another service back into an ApiError. */
export function fromEnvelope(status: number, body: unknown): ApiError | undefined {
  if (typeof body !== 'object' || body === null || !('error' in body)) return undefined;
  const e = (body as { error: unknown }).error;
  if (typeof e !== 'object' || e === null) return undefined;
  const { code, message, details } = e as { code?: unknown; message?: unknown; details?: unknown };
  if (!isErrorCode(code) || ERROR_STATUS[code] !== status) return undefined;
  return new ApiError(
    code,
    typeof message === 'string' ? message : code,
    typeof details === 'object' && details !== null ? (details as ErrorDetails) : undefined,
  );
}
