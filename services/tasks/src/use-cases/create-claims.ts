/**
 * Video-task creation on the shared claim mechanism (packages/shared idempotency/claims.ts): the driver
 * over this service's claims, and its finish step. A create whose process died before writing its task
 * (claim `running`) is run again by the next duplicate; one that died after (claim `settling`, task
 * `submitting`: maybe charged, maybe submitted) is finished by the next duplicate or by crash recovery,
 * whichever comes first after its lease lapsed: charged again under the task id (idempotent) and
 * submitted again under the same job id (idempotent), so nothing is charged twice and no charge is lost.
 */
import { type ClaimRecord, IdempotentRequests } from '@vision/shared';
import { type TaskContext, workerIdentity } from '../ports';
import type { TaskRow } from '../store/task-store';
import { submitTask } from './submission';

export type CreateClaims = IdempotentRequests<ClaimRecord, object>;

export function createClaims(ctx: TaskContext): CreateClaims {
  return new IdempotentRequests({
    store: ctx.store.claims,
    clock: ctx.clock,
    logger: ctx.logger,
    name: 'task create',
    settings: { leaseMs: ctx.settings.recoverAfterMs, waitMs: ctx.settings.idempotencyWaitMs },
  });
}

/** The finish step of a create whose owner died after writing its task; then the claim is completed. */
export async function finishCreate(ctx: TaskContext, claim: ClaimRecord): Promise<void> {
  const task = await ctx.store.get(claim.taskId);
  if (task && task.status === 'submitting' && !task.queued_at && !(await settleSubmitting(ctx, task))) return; // quota unreachable: the lease lapses and the next round tries again
  await ctx.store.claims.markCompleted(claim);
}

/**
 * Carries a `submitting` task nobody works on to its next state: charge again (idempotent by task id),
 * submit again (idempotent by job id); an abandoned one (its caller was told it failed, but the refund
 * could not be made) is refunded and removed. False when it must be tried again later.
 */
export async function settleSubmitting(ctx: TaskContext, task: TaskRow): Promise<boolean> {
  if (ctx.inflight.has(task.task_id)) return false;
  ctx.inflight.add(task.task_id);
  try {
    const identity = workerIdentity(task.subject);
    if (task.abandoned) {
      if (!(await ctx.quota.refund(identity, task.task_id).catch(() => false))) return false;
      await ctx.store.discard(task.task_id);
      // Its upload was kept while the row referred to it.
      if (task.object_key) await ctx.objects.delete([task.object_key]).catch(() => undefined);
      return true;
    }
    const charge = await ctx.quota.charge(identity, task.task_id);
    if (charge.kind === 'unavailable') return false;
    if (charge.kind === 'exhausted') {
      await ctx.store.move(task.task_id, 'submission_rejected', { reason: 'quota_exhausted' });
      return true;
    }
    if (charge.kind === 'refunded') {
      // Its charge was refunded (e.g. a crash after the refund): it must not run for free.
      await ctx.store.move(task.task_id, 'submission_rejected', { reason: 'charge_refunded' });
      ctx.signals.eventsWritten();
      return true;
    }
    // A file task that finds no slot waits in the queue (domain/fair-share.ts) rather than refunded.
    await submitTask(ctx, identity, task, task.source_type === 'file' ? 'queue' : 'recovery');
    return true;
  } finally {
    ctx.inflight.delete(task.task_id);
  }
}
