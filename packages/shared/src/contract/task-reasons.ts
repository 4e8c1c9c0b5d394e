/**
 * Why a task failed or was refunded: a code from a closed list plus a short fixed message, optionally
 * with a detail made only of digits and words we chose (a status code, a time). Never an ffmpeg line,
 * a path, an object key, a URL, a host name or a credential. Stored in `tasks.reason` (varchar(256))
 * and shown to callers as `reason`; docs/API.md lists the codes. Pure.
 */
export const TASK_REASONS = {
  // the caller's stream
  stream_unreachable: 'the stream could not be reached',
  stream_lost: 'the stream was lost and did not come back in time',
  stream_auth_failed: 'the stream server refused the credentials',
  stream_not_found: 'the stream server has no such stream',
  stream_refused: 'the stream led to an address that is not allowed',
  stream_unsupported: 'the stream uses a transport or option that is not supported',
  // the video itself
  media_unreadable: 'the video could not be decoded',
  no_video_frames: 'no video frames could be decoded',
  // our side
  decoder_unavailable: 'the video decoder is unavailable',
  backend_shutdown: 'the inference backend shut down',
  backend_lost_job: 'the inference backend lost the job',
  backend_rejected: 'the inference backend refused the job',
  backend_unavailable: 'the inference backend was unavailable',
  breaker_open: 'the inference backend was failing',
  internal_error: 'internal error',
  // refunds decided by the tasks service
  quota_exhausted: 'the daily quota was exhausted',
  charge_refunded: 'the charge was refunded',
  backend_has_no_job: 'the inference backend never created the job',
  verified_not_created: 'an operator verified that the job was not created',
  withdrawn_from_queue: 'the task was stopped while it waited for a slot',
  queue_timeout: 'the task waited for a slot for too long',
} as const;

export type TaskReasonCode = keyof typeof TASK_REASONS;
export const TASK_REASON_CODES = Object.keys(TASK_REASONS) as TaskReasonCode[];

/** Longest reason ever produced (tasks.reason is varchar(256); the API schema says maxLength 256). */
export const TASK_REASON_MAX = 200;

const DETAIL_RE = /^[A-Za-z0-9 .,()=<>/_-]{1,60}$/;

export function isTaskReasonCode(v: string): v is TaskReasonCode {
  return Object.prototype.hasOwnProperty.call(TASK_REASONS, v);
}

/** `code: message` or `code: message (detail)`; a detail that is not plain words and digits is dropped. */
export function taskReason(code: TaskReasonCode, detail?: string): string {
  const base = `${code}: ${TASK_REASONS[code]}`;
  if (!detail || !DETAIL_RE.test(detail) || /\/\/|@/.test(detail)) return base;
  return `${base} (${detail})`.slice(0, TASK_REASON_MAX);
}

/**
 * Any reason on its way into storage or a response, mapped into the closed list: a well-formed reason
 * of ours is rebuilt from its code (and its detail, re-checked); a bare code gets its message; anything
 * else (an old free-text reason, an ffmpeg line) becomes `internal_error`, or `fallback` when given.
 */
export function toTaskReason(
  raw: string | null | undefined,
  fallback: TaskReasonCode = 'internal_error',
): string {
  if (raw === null || raw === undefined || raw === '') return taskReason(fallback);
  const m = /^([a-z_]{1,40})(?::\s[^(]*?(?:\s\(([^)]*)\))?)?$/.exec(raw.slice(0, 400));
  if (m && isTaskReasonCode(m[1])) return taskReason(m[1], m[2]);
  return taskReason(fallback);
}

/** The code of a reason built by taskReason (undefined for anything else). */
export function taskReasonCode(reason: string | null | undefined): TaskReasonCode | undefined {
  const code = /^([a-z_]+)(?::|$)/.exec(reason ?? '')?.[1];
  return code && isTaskReasonCode(code) ? code : undefined;
}
