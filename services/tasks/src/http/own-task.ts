import type { Request, Response } from 'express';
import { ApiError, type Identity, identityOf } from '@vision/shared';
import type { TaskRow, TaskStore } from '../store/task-store';
import type { ImageCalls } from '../use-cases/image-calls';

/**
 * The task `id` as stored, or, when it is not stored, the caller's image call of that id whose record is
 * still on the way (asked of the images service when `images` is given); undefined when neither has it.
 */
export async function findTask(
  store: Pick<TaskStore, 'get'>,
  images: Pick<ImageCalls, 'lookup'> | undefined,
  identity: Identity,
  id: string,
): Promise<TaskRow | undefined> {
  if (id.length === 0 || id.length > 64) return undefined;
  return (await store.get(id)) ?? (await images?.lookup(identity, id));
}

/**
 * The task named by `:task_id` when it belongs to the caller's subject and has not expired; 404 for an
 * unknown task, another subject's task and an expired one alike (nothing tells them apart). Given
 * `images`, an image call is also found while its record is on the way (findTask).
 */
export async function ownTask(
  store: TaskStore,
  req: Request,
  res: Response,
  images?: Pick<ImageCalls, 'lookup'>,
): Promise<TaskRow> {
  const identity = identityOf(res);
  const task = await findTask(store, images, identity, String(req.params.task_id ?? ''));
  if (!task || task.subject !== identity.subject || task.expired_at || task.abandoned)
    throw new ApiError('OP-NOT-FOUND', 'No such task');
  return task;
}
