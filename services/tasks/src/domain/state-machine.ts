/**
 * Video task states and the moves between them (SPEC.md section 3). Pure: no I/O.
 *
 * Stated moves (SPEC.md 3) plus the ones the spec leaves to us ("not shown"), each named by its trigger:
 * - create accepted -> submitting; submission accepted -> running; rejected -> refunded; outcome unknown -> resolving
 * - resolving verified created -> running; verified not created -> refunded
 * - running stop -> stopping; stopping confirmed -> stopped
 * - running job ended -> succeeded | failed | stopped (the backend's own end, e.g. a file that finished, a stream gone)
 * - stopping job ended on its own before the stop landed -> succeeded | failed
 * - running | stopping job failed for a reason on our side (JOB_FAILURES_REFUNDED) -> refunded (the charge is returned)
 */
import { taskReasonCode, type TaskReasonCode } from '@vision/shared';

export const TASK_STATUSES = [
  'submitting',
  'resolving',
  'running',
  'stopping',
  'stopped',
  'succeeded',
  'failed',
  'refunded',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const TERMINAL_STATUSES: readonly TaskStatus[] = ['stopped', 'succeeded', 'failed', 'refunded'];
/** States that hold one of the subject's active-task slots (SPEC.md 3: resolving still occupies concurrency). */
export const ACTIVE_STATUSES: readonly TaskStatus[] = ['submitting', 'resolving', 'running', 'stopping'];

export type TaskTrigger =
  | 'submission_accepted'
  | 'submission_rejected'
  | 'submission_unknown'
  | 'verified_created'
  | 'verified_not_created'
  | 'stop_requested'
  | 'stop_confirmed'
  | 'job_succeeded'
  | 'job_failed'
  | 'job_failed_ours'
  | 'job_stopped';

interface Move {
  from: TaskStatus;
  trigger: TaskTrigger;
  to: TaskStatus;
}

export const MOVES: readonly Move[] = [
  { from: 'submitting', trigger: 'submission_accepted', to: 'running' },
  { from: 'submitting', trigger: 'submission_rejected', to: 'refunded' },
  { from: 'submitting', trigger: 'submission_unknown', to: 'resolving' },
  { from: 'resolving', trigger: 'verified_created', to: 'running' },
  { from: 'resolving', trigger: 'verified_not_created', to: 'refunded' },
  { from: 'running', trigger: 'stop_requested', to: 'stopping' },
  { from: 'running', trigger: 'job_succeeded', to: 'succeeded' },
  { from: 'running', trigger: 'job_failed', to: 'failed' },
  { from: 'running', trigger: 'job_stopped', to: 'stopped' },
  { from: 'stopping', trigger: 'stop_confirmed', to: 'stopped' },
  { from: 'stopping', trigger: 'job_stopped', to: 'stopped' },
  { from: 'stopping', trigger: 'job_succeeded', to: 'succeeded' },
  { from: 'stopping', trigger: 'job_failed', to: 'failed' },
  { from: 'running', trigger: 'job_failed_ours', to: 'refunded' },
  { from: 'stopping', trigger: 'job_failed_ours', to: 'refunded' },
];

/**
 * A running job that failed for a reason on our side, not the caller's stream or video: the decoder could
 * not run or crashed again and again (decoder_unavailable), or inference failed internally (internal_error).
 * The task is refunded. A stream unreachable, lost, refused or not found, or a video that does not decode,
 * is the caller's: the task fails and stays charged.
 */
export const JOB_FAILURES_REFUNDED: readonly TaskReasonCode[] = ['decoder_unavailable', 'internal_error'];

export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

export function isActive(status: TaskStatus): boolean {
  return ACTIVE_STATUSES.includes(status);
}

export function isTaskStatus(v: unknown): v is TaskStatus {
  return typeof v === 'string' && (TASK_STATUSES as readonly string[]).includes(v);
}

export type Transition = { ok: true; to: TaskStatus } | { ok: false; reason: 'not_allowed' };

/** The state a trigger moves `from` to, or a refusal when the move is not one of MOVES. */
export function transition(from: TaskStatus, trigger: TaskTrigger): Transition {
  const move = MOVES.find((m) => m.from === from && m.trigger === trigger);
  return move ? { ok: true, to: move.to } : { ok: false, reason: 'not_allowed' };
}

/** True when moving directly from one status to another is one of the stated moves (by any trigger). */
export function canMove(from: TaskStatus, to: TaskStatus): boolean {
  return MOVES.some((m) => m.from === from && m.to === to);
}

/** What a stop request means for a task in each state (SPEC.md 4.5; submitting/resolving are our choice). */
export type StopDecision = 'stop_now' | 'already_stopping' | 'defer_until_running' | 'not_stoppable';

export function stopDecision(status: TaskStatus): StopDecision {
  switch (status) {
    case 'running':
      return 'stop_now';
    case 'stopping':
      return 'already_stopping';
    case 'submitting':
    case 'resolving':
      return 'defer_until_running';
    default:
      return 'not_stoppable';
  }
}

/** Trigger for a backend job status (and, for a failed job, its reason) seen by the poller or a stop. */
export function triggerForJobStatus(jobStatus: string, reason?: string | null): TaskTrigger | undefined {
  switch (jobStatus) {
    case 'succeeded':
      return 'job_succeeded';
    case 'failed': {
      const code = taskReasonCode(reason);
      return code && JOB_FAILURES_REFUNDED.includes(code) ? 'job_failed_ours' : 'job_failed';
    }
    case 'stopped':
      return 'job_stopped';
    default:
      return undefined;
  }
}
