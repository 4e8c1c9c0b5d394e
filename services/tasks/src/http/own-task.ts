import type { Request, Response } from 'express';
import { ApiError, identityOf } from '@vision/shared';
import type { TaskRow, TaskStore } from '../store/task-store';

/**
 * The task named by `:task_id` when it belongs to the caller's subject and has not expired; 404 for an
 * unknown task, another subject's task and an expired one alike (nothing tells them apart).
 */
export async function ownTask(store: TaskStore, req: Request, res: Response): Promise<TaskRow> {
  const identity = identityOf(res);
  const id = String(req.params.task_id ?? '');
  const task = id.length <= 64 ? await store.get(id) : undefined;
  if (!task || task.subject !== identity.subject || task.expired_at || task.abandoned)
    throw new ApiError('OP-NOT-FOUND', 'No such task');
  return task;
}
