/**
 * Tasks left `submitting` by a crashed create (untouched for TASKS_RECOVER_AFTER_MS): charge again
 * (idempotent by task id), submit again (idempotent by job id); an abandoned one (its caller was told
 * it failed, but the refund could not be made) is refunded and removed.
 */
import { type TaskContext, workerIdentity } from '../ports';
import { submitTask } from '../use-cases/submission';

export async function recoverSubmitting(ctx: TaskContext): Promise<void> {
  const before = new Date(ctx.clock.now().getTime() - ctx.settings.recoverAfterMs);
  const tasks = await ctx.store.inStatus(['submitting'], 50, before);
  for (const task of tasks) {
    if (ctx.inflight.has(task.task_id)) continue;
    ctx.inflight.add(task.task_id);
    try {
      const identity = workerIdentity(task.subject);
      if (task.abandoned) {
        if (await ctx.quota.refund(identity, task.task_id).catch(() => false)) {
          await ctx.store.discard(task.task_id);
          // Its upload was kept while the row referred to it.
          if (task.object_key) await ctx.objects.delete([task.object_key]).catch(() => undefined);
        }
        continue;
      }
      const charge = await ctx.quota.charge(identity, task.task_id);
      if (charge.kind === 'exhausted') {
        await ctx.store.move(task.task_id, 'submission_rejected', { reason: 'quota_exhausted' });
        continue;
      }
      if (charge.kind === 'unavailable') continue;
      if (charge.kind === 'refunded') {
        // Its charge was refunded (e.g. a crash after the refund): it must not run for free.
        await ctx.store.move(task.task_id, 'submission_rejected', { reason: 'charge_refunded' });
        ctx.signals.eventsWritten();
        continue;
      }
      // A file task that finds no slot waits in the queue (domain/fair-share.ts) rather than refunded.
      await submitTask(ctx, identity, task, task.source_type === 'file' ? 'queue' : 'recovery');
    } catch (err) {
      ctx.logger.warn({ err, task_id: task.task_id }, 'recovery of a submitting task failed; will retry');
    } finally {
      ctx.inflight.delete(task.task_id);
    }
  }
}
