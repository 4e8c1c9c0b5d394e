/** Manual verification of a resolving task by an operator (SPEC.md 3, domain/outcomes.ts VERIFY). */
import { ApiError, REASON } from '@vision/shared';
import { VERIFY } from '../domain/outcomes';
import type { TaskContext } from '../ports';
import type { TaskRow } from '../store/task-store';
import { afterRunning, refundAndMove } from './submission';

export async function verifyTask(ctx: TaskContext, taskId: string, created: boolean): Promise<TaskRow> {
  const task = await ctx.store.get(taskId);
  if (!task || task.kind !== 'video') throw new ApiError('OP-NOT-FOUND', 'No such task');
  if (task.status !== 'resolving')
    throw new ApiError('OP-TASK-REQUEST-INVALID', `Task is ${task.status}, not resolving`, {
      reason: REASON.not_resolving,
      status: task.status,
    });
  const row = VERIFY[created ? 'created' : 'not_created'];
  if (!row.refund) {
    const moved = await ctx.store.move(taskId, row.trigger);
    return moved ? afterRunning(ctx, moved) : ((await ctx.store.get(taskId)) ?? task);
  }
  return refundAndMove(ctx, task, 'verified_not_created', row.taskReason ?? 'verified_not_created');
}
