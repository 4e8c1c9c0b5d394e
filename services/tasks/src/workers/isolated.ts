/**
 * Writes made for one task of a background round (poll, stop, reconcile): a failed write is logged and
 * left for the next round, never aborting the round for the other tasks.
 */
import type { TaskContext } from '../ports';
import type { TaskRow, TaskStore } from '../store/task-store';

export function writeFailed(ctx: TaskContext, taskId: string, err: unknown): undefined {
  ctx.logger.warn({ err, task_id: taskId }, 'task update failed; retried next round');
  return undefined;
}

/** ctx.store.move for one task of a round: undefined (logged) when the write fails. */
export function isolatedMove(
  ctx: TaskContext,
  ...args: Parameters<TaskStore['move']>
): Promise<TaskRow | undefined> {
  return ctx.store.move(...args).catch((err: unknown) => writeFailed(ctx, args[0], err));
}
