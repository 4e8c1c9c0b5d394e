/**
 * Starts the lost job of a running task again on the backend (domain/lost-job.ts), or refunds the task once
 * its restarts are spent. Called by the job poller for each running task whose job is lost.
 */
import { planLostJob } from '../domain/lost-job';
import { rejectionReason } from '../domain/outcomes';
import { type TaskContext, workerIdentity } from '../ports';
import type { TaskRow } from '../store/task-row';
import { refundAndMove, sourceOf } from './submission';

export async function restartLostJob(ctx: TaskContext, task: TaskRow): Promise<void> {
  const plan = planLostJob(task, ctx.settings.jobRestarts);
  if (plan.kind === 'give_up') {
    ctx.logger.warn({ task_id: task.task_id, restarts: task.job_restarts }, 'lost job not started again');
    await refundAndMove(ctx, task, 'job_failed_ours', 'backend_lost_job');
    return;
  }
  // Counted before it is sent: a run that was sent is never sent again with the same first seq.
  if (!(await ctx.store.countJobRestart(task.task_id, task.job_restarts, ctx.settings.resolveGraceMs)))
    return; // another replica counts and sends this restart
  const out = await ctx.inference.submit(workerIdentity(task.subject), {
    job_id: task.task_id,
    scene_code: task.scene_code,
    source: sourceOf(ctx, task),
    first_seq: plan.firstSeq,
    keep_frames: task.rules_version > 0,
  });
  const fields = { task_id: task.task_id, restarts: task.job_restarts + 1, first_seq: plan.firstSeq };
  if (out.kind === 'accepted') {
    ctx.logger.warn(fields, 'lost job started again');
    return;
  }
  if (out.kind === 'rejected') {
    ctx.logger.warn({ ...fields, reason: out.reason }, 'lost job refused when started again');
    await refundAndMove(ctx, task, 'job_failed_ours', rejectionReason(out.reason));
    return;
  }
  // Not delivered, outcome unknown, or no slot: the next poll finds the job, or starts it again.
  ctx.logger.warn({ ...fields, outcome: out.kind }, 'lost job not started again yet');
}
