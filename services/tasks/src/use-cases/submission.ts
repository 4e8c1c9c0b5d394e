/**
 * Submitting a charged `submitting` task to the inference backend and carrying out the row of the
 * outcome table (domain/outcomes.ts): state move, refund, answer. Shared by create and crash recovery.
 */
import { ApiError, type Identity, type JobSource, type JobView, type SubmitOutcome } from '@vision/shared';
import { type SubmitContext, type SubmitResult, rejectionReason, submitRow } from '../domain/outcomes';
import { triggerForJobStatus } from '../domain/state-machine';
import type { TaskContext } from '../ports';
import { workerIdentity } from '../ports';
import type { TaskRow } from '../store/task-store';

export interface Submitted {
  task: TaskRow;
  status: 201 | 202;
}

/** Where a task's job reads its video from (the stream URL unsealed). */
export function sourceOf(ctx: Pick<TaskContext, 'streamUrls'>, task: TaskRow): JobSource {
  if (task.source_type === 'file') return { type: 'object', key: String(task.object_key) };
  const url = ctx.streamUrls.open(String(task.stream_url));
  // Sealed under another key: TASKS_STREAM_URL_KEY changed (docs/CONFIGURATION.md).
  if (url === undefined) throw new Error(`the stream URL of task ${task.task_id} cannot be unsealed`);
  return { type: 'stream', url };
}

function resultOf(out: SubmitOutcome): SubmitResult {
  if (out.kind === 'not_delivered') return out.breakerOpen ? 'breaker_open' : 'not_delivered';
  return out.kind;
}

/**
 * Submits `task` and applies the outcome. From a request, an outcome whose row answers an error
 * undoes the task (refund, discard) and throws that error; from recovery every outcome moves the task.
 */
export async function submitTask(
  ctx: TaskContext,
  identity: Identity,
  task: TaskRow,
  context: SubmitContext,
): Promise<Submitted> {
  const out = await ctx.inference.submit(identity, {
    job_id: task.task_id,
    scene_code: task.scene_code,
    source: sourceOf(ctx, task),
    keep_frames: task.rules_version > 0, // the pictures of its events (docs/EVIDENCE.md)
  });
  const row = submitRow(context, resultOf(out));
  if (row.queue) {
    // No slot: the charged task waits in the queue (at its old place when it had one).
    const queued = await ctx.store.enqueue(task.task_id, task.queued_at ?? undefined);
    return { task: queued ?? (await ctx.store.get(task.task_id)) ?? task, status: 201 };
  }
  if (row.answer.kind === 'error') {
    await undo(ctx, identity, task, row.refund);
    // The breaker opened under this very call: the same refusal as before a call, Retry-After until its probe.
    if (out.kind === 'not_delivered' && out.breakerOpen) throw ctx.inference.breakerRefusal('new tasks');
    const a = row.answer;
    throw new ApiError(
      a.code,
      a.message,
      a.reason ? { reason: a.reason } : undefined,
      a.retryAfter ? { 'Retry-After': a.retryAfter } : undefined,
    );
  }
  const status = row.answer.status;
  if (out.kind === 'accepted') {
    const moved = await ctx.store.move(task.task_id, 'submission_accepted');
    if (!moved) return { task: (await ctx.store.get(task.task_id)) ?? task, status };
    return { task: await afterRunning(ctx, moved, out.job), status };
  }
  if (out.kind === 'unknown') {
    ctx.logger.warn(
      { task_id: task.task_id, detail: out.detail },
      'submission outcome unknown; task resolving',
    );
    return { task: (await ctx.store.move(task.task_id, 'submission_unknown')) ?? task, status };
  }
  const reason =
    out.kind === 'rejected' ? rejectionReason(out.reason) : (row.taskReason ?? 'backend_unavailable');
  return { task: await refundAndMove(ctx, task, 'submission_rejected', reason), status };
}

/** After a task becomes running: a job already ended moves on; a stop asked for earlier is carried out. */
export async function afterRunning(ctx: TaskContext, task: TaskRow, job?: JobView): Promise<TaskRow> {
  let cur = task;
  if (job && triggerForJobStatus(job.status, job.reason)) cur = (await followJob(ctx, task, job)) ?? cur;
  else if (cur.stop_requested) {
    cur = (await ctx.store.move(task.task_id, 'stop_requested')) ?? cur;
    void ctx.signals.driveStops();
  }
  ctx.signals.eventsWritten();
  return cur;
}

/**
 * Moves a running or stopping task after its job's end (poller, stop driver, a task that just became
 * running): succeeded, stopped, failed; a failure on our side (JOB_FAILURES_REFUNDED) is refunded.
 * Undefined when the job has not ended or the move is not allowed any more. Throws when a write fails.
 */
export async function followJob(ctx: TaskContext, task: TaskRow, job: JobView): Promise<TaskRow | undefined> {
  const trigger = triggerForJobStatus(job.status, job.reason);
  if (!trigger) return undefined;
  const reason = job.reason ?? null;
  if (trigger === 'job_failed_ours') return refundAndMove(ctx, task, trigger, reason ?? 'internal_error');
  return ctx.store.move(task.task_id, trigger, { reason });
}

/** Refunds the task's charge and moves it to `refunded`; a failed refund is retried by the reconciler. */
export async function refundAndMove(
  ctx: TaskContext,
  task: TaskRow,
  trigger: 'submission_rejected' | 'verified_not_created' | 'job_failed_ours',
  reason: string,
): Promise<TaskRow> {
  const refunded = await ctx.quota.refund(workerIdentity(task.subject), task.task_id).catch(() => false);
  const moved = await ctx.store.move(task.task_id, trigger, { reason, refund_pending: !refunded });
  // A slow backend may still create the job of a resolving task: stop it (idempotent; 404 is fine).
  if (trigger === 'verified_not_created')
    await ctx.inference.stopJob(workerIdentity(task.subject), task.task_id).catch(() => null);
  ctx.signals.eventsWritten();
  return moved ?? (await ctx.store.get(task.task_id)) ?? task;
}

/** Takes back a task the caller is told failed: refund (when charged) and discard, or leave it to recovery. */
export async function undo(
  ctx: TaskContext,
  identity: Identity,
  task: TaskRow,
  charged: boolean,
): Promise<void> {
  if (charged && !(await ctx.quota.refund(identity, task.task_id).catch(() => false))) {
    await ctx.store.markAbandoned(task.task_id);
    return;
  }
  await ctx.store.discard(task.task_id);
}
