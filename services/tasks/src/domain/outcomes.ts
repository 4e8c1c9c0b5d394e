/**
 * What each outcome of a submission, a manual verification and a stop means (SPEC.md section 3), as
 * a table: the state move, whether the charge is refunded, and what the caller is answered. Pure: the
 * use cases in use-cases/ carry the rows out.
 */
import type { ErrorCode, Reason } from '@vision/shared';
import type { TaskStatus, TaskTrigger } from './state-machine';

/** What the inference backend answered to a submission (clients' SubmitOutcome, breaker folded in). */
export type SubmitResult =
  'accepted' | 'rejected' | 'unknown' | 'over_capacity' | 'not_delivered' | 'breaker_open';

/**
 * Who submitted: a create request of a live task (a caller waits), of a file task (a caller waits; a
 * full backend queues it, domain/fair-share.ts), crash recovery of a live task (nobody waits), or the
 * queue's dispatcher and the recovery of a file task (nobody waits; the task waits in the queue).
 */
export type SubmitContext = 'request' | 'file_request' | 'recovery' | 'queue';

export type Answer =
  /** The task, with this HTTP status. */
  | { kind: 'task'; status: 201 | 202 }
  /** An error; the task is undone first (refunded when charged, then discarded). */
  | { kind: 'error'; code: ErrorCode; reason?: Reason; message: string; retryAfter?: string };

export interface SubmitRow {
  /** The state move applied to the task (undefined: the task is undone, not moved). */
  trigger?: TaskTrigger;
  /** The quota charge is given back. */
  refund: boolean;
  /** Stored as the task's reason when it ends. */
  taskReason?: string;
  /** The task (charged, still submitting) waits in the queue for a slot instead. */
  queue?: true;
  answer: Answer;
}

const upstreamDown = (message: string): Answer => ({
  kind: 'error',
  code: 'OP-TASK-UPSTREAM-DOWN',
  message,
  retryAfter: '10',
});

const BREAKER_OPEN: Answer = {
  kind: 'error',
  code: 'OP-TASK-BREAKER-OPEN',
  reason: 'breaker_open',
  message: 'The inference backend is failing; new tasks are not accepted for now',
};

/** A file task that found no slot: it keeps its charge and waits in the queue (201, submitting). */
const QUEUED: SubmitRow = { refund: false, queue: true, answer: { kind: 'task', status: 201 } };

/** SUBMIT[context][result]: every submission outcome in every context. */
export const SUBMIT: Record<SubmitContext, Record<SubmitResult, SubmitRow>> = {
  request: {
    // SPEC 3: create accepted -> submitting, later running; quota charged.
    accepted: { trigger: 'submission_accepted', refund: false, answer: { kind: 'task', status: 201 } },
    // SPEC 3: submitting -> refunded when the backend rejects; quota refunded (the task is shown).
    rejected: { trigger: 'submission_rejected', refund: true, answer: { kind: 'task', status: 201 } },
    // SPEC 3: outcome unknown -> resolving; create returns 202; stays charged.
    unknown: { trigger: 'submission_unknown', refund: false, answer: { kind: 'task', status: 202 } },
    // Not delivered: nothing can have been created; undone, charge returned, no task.
    over_capacity: {
      refund: true,
      answer: upstreamDown('The inference backend is at capacity, retry later'),
    },
    not_delivered: {
      refund: true,
      answer: upstreamDown('The inference backend is unavailable, retry later'),
    },
    breaker_open: { refund: true, answer: BREAKER_OPEN },
  },
  file_request: {
    accepted: { trigger: 'submission_accepted', refund: false, answer: { kind: 'task', status: 201 } },
    rejected: { trigger: 'submission_rejected', refund: true, answer: { kind: 'task', status: 201 } },
    unknown: { trigger: 'submission_unknown', refund: false, answer: { kind: 'task', status: 202 } },
    // Files are not real-time: a full backend queues the task (SPEC 3: submitting, quota charged).
    over_capacity: QUEUED,
    not_delivered: {
      refund: true,
      answer: upstreamDown('The inference backend is unavailable, retry later'),
    },
    breaker_open: { refund: true, answer: BREAKER_OPEN },
  },
  queue: {
    accepted: { trigger: 'submission_accepted', refund: false, answer: { kind: 'task', status: 201 } },
    rejected: { trigger: 'submission_rejected', refund: true, answer: { kind: 'task', status: 201 } },
    unknown: { trigger: 'submission_unknown', refund: false, answer: { kind: 'task', status: 202 } },
    // Nobody waits: back to its place in the queue (TASKS_QUEUE_MAX_WAIT_MS ends the wait, refunded).
    over_capacity: QUEUED,
    not_delivered: QUEUED,
    breaker_open: QUEUED,
  },
  recovery: {
    accepted: { trigger: 'submission_accepted', refund: false, answer: { kind: 'task', status: 201 } },
    rejected: { trigger: 'submission_rejected', refund: true, answer: { kind: 'task', status: 201 } },
    unknown: { trigger: 'submission_unknown', refund: false, answer: { kind: 'task', status: 202 } },
    // Nobody waits: the task ends refunded with the reason instead of being undone.
    over_capacity: {
      trigger: 'submission_rejected',
      refund: true,
      taskReason: 'backend_unavailable',
      answer: { kind: 'task', status: 201 },
    },
    not_delivered: {
      trigger: 'submission_rejected',
      refund: true,
      taskReason: 'backend_unavailable',
      answer: { kind: 'task', status: 201 },
    },
    breaker_open: {
      trigger: 'submission_rejected',
      refund: true,
      taskReason: 'breaker_open',
      answer: { kind: 'task', status: 201 },
    },
  },
};

export function submitRow(context: SubmitContext, result: SubmitResult): SubmitRow {
  return SUBMIT[context][result];
}

/** The task reason of a backend rejection (bounded; the backend's words after a fixed prefix). */
export function rejectionReason(backendReason: string): string {
  return `backend_rejected: ${backendReason}`.slice(0, 250);
}

/** SPEC 3: manual verification of a resolving task. */
export const VERIFY: Record<
  'created' | 'not_created',
  { trigger: TaskTrigger; refund: boolean; taskReason?: string }
> = {
  created: { trigger: 'verified_created', refund: false },
  not_created: { trigger: 'verified_not_created', refund: true, taskReason: 'verified_not_created' },
};

/** SPEC 4.5 and 3: what a stop does in each state, and the answer. */
export type StopRow =
  | { action: 'stop_now'; trigger: 'stop_requested'; status: 200 }
  | { action: 'wait_for_stop'; status: 200 }
  | { action: 'defer_until_running'; status: 202 }
  | { action: 'not_stoppable'; code: 'OP-TASK-NOT-STOPPABLE' };

export function stopRow(status: TaskStatus): StopRow {
  switch (status) {
    case 'running':
      return { action: 'stop_now', trigger: 'stop_requested', status: 200 };
    case 'stopping':
      return { action: 'wait_for_stop', status: 200 };
    case 'submitting':
    case 'resolving':
      return { action: 'defer_until_running', status: 202 };
    default:
      return { action: 'not_stoppable', code: 'OP-TASK-NOT-STOPPABLE' };
  }
}
