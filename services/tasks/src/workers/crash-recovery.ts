/**
 * Crash recovery: creates whose process died after writing their task (their claim `settling`, its
 * lease of TASKS_RECOVER_AFTER_MS lapsed) are finished by the shared claim sweeper, unless a duplicate
 * request did it first (use-cases/create-claims.ts); tasks a queue dispatcher took and died with
 * (`submitting`, owned by no create, untouched for TASKS_RECOVER_AFTER_MS) are submitted again.
 */
import type { TaskContext } from '../ports';
import { createClaims, finishCreate, settleSubmitting } from '../use-cases/create-claims';

export async function recoverSubmitting(ctx: TaskContext): Promise<void> {
  await createClaims(ctx).finishLapsed((claim) => finishCreate(ctx, claim), 50);
  const before = new Date(ctx.clock.now().getTime() - ctx.settings.recoverAfterMs);
  for (const task of await ctx.store.orphanedSubmitting(before, 50)) {
    try {
      await settleSubmitting(ctx, task);
    } catch (err) {
      ctx.logger.warn({ err, task_id: task.task_id }, 'recovery of a submitting task failed; will retry');
    }
  }
}
