/**
 * Settles `resolving` tasks after the backend (SPEC.md 3: "the service is confirming acceptance"):
 * a job that exists moves the task to running; none after TASKS_RESOLVE_GRACE_MS refunds it. Also
 * retries refunds that could not reach quota, and stops jobs a slow backend created after their
 * task was refunded as not created.
 */
import type { JobView } from '@vision/shared';
import { type TaskContext, workerIdentity } from '../ports';
import { afterRunning, refundAndMove } from '../use-cases/submission';
import { isolatedMove, writeFailed } from './isolated';

/** Refund reasons of resolving tasks settled as not created (their job may still appear late). */
const NOT_CREATED_REASONS = ['backend_has_no_job', 'verified_not_created'];
/** How long after such a refund the reconciler still looks for a late job to stop. */
const LATE_JOB_WINDOW_MS = 10 * 60_000;

export async function reconcileResolving(ctx: TaskContext): Promise<void> {
  const tasks = await ctx.store.inStatus(['resolving'], 100);
  for (const task of tasks) {
    if (ctx.inflight.has(task.task_id)) continue;
    let job: JobView | null;
    try {
      job = await ctx.inference.getJob(workerIdentity(task.subject), task.task_id);
    } catch {
      continue; // backend unreachable: ask again next round
    }
    if (job) {
      const moved = await isolatedMove(ctx, task.task_id, 'verified_created');
      if (moved)
        await afterRunning(ctx, moved, job).catch((err: unknown) => writeFailed(ctx, task.task_id, err));
    } else if (ctx.clock.now().getTime() - task.updated_at.getTime() >= ctx.settings.resolveGraceMs) {
      await refundAndMove(ctx, task, 'verified_not_created', 'backend_has_no_job').catch((err: unknown) =>
        writeFailed(ctx, task.task_id, err),
      );
    }
  }
}

export async function retryRefunds(ctx: TaskContext): Promise<void> {
  for (const task of await ctx.store.refundsPending(50)) {
    if (await ctx.quota.refund(workerIdentity(task.subject), task.task_id).catch(() => false))
      await ctx.store
        .setRefundPending(task.task_id, false)
        .catch((err: unknown) => writeFailed(ctx, task.task_id, err));
  }
}

/**
 * Stops jobs a slow backend created after their resolving task was refunded as not created (for
 * LATE_JOB_WINDOW_MS after the refund): nobody pays for them and nobody would stop them otherwise.
 */
export async function stopLateJobs(ctx: TaskContext): Promise<void> {
  const since = new Date(ctx.clock.now().getTime() - LATE_JOB_WINDOW_MS);
  const tasks = await ctx.store.refundedSince(NOT_CREATED_REASONS, since, 100);
  if (tasks.length === 0) return;
  let jobs: Map<string, JobView>;
  try {
    jobs = await ctx.inference.getJobs(
      workerIdentity('tasks-service'),
      tasks.map((t) => t.task_id),
    );
  } catch {
    return; // backend unreachable: ask again next round
  }
  for (const task of tasks) {
    if (jobs.get(task.task_id)?.status !== 'running') continue;
    ctx.logger.warn({ task_id: task.task_id }, 'stopping a job created after its task was refunded');
    await ctx.inference.stopJob(workerIdentity(task.subject), task.task_id).catch(() => null);
  }
}
