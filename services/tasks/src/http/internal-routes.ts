/** Internal endpoints for other services (docs/INTERNAL.md, tasks). */
import type { Express } from 'express';
import { ApiError, identityOf, route } from '@vision/shared';
import type { TaskRow } from '../store/task-store';
import type { HttpDeps } from './deps';
import { findTask } from './own-task';

function internalView(t: TaskRow) {
  return {
    task_id: t.task_id,
    subject: t.subject,
    kind: t.kind,
    scene_code: t.scene_code,
    status: t.status,
    business_threshold: t.business_threshold,
    lower_bound: t.lower_bound,
    result_expires_at: t.result_expires_at.toISOString(),
  };
}

export function mountInternalRoutes(app: Express, d: HttpDeps): void {
  const { store } = d.ctx;
  app.get(
    '/internal/v1/tasks/:task_id',
    route(async (req, res) => {
      // On behalf of the caller: an image call of theirs is found while its record is on the way. Another
      // subject's task is 404, as an unknown one (nothing tells them apart), as on the public routes.
      const identity = identityOf(res);
      const task = await findTask(store, d.imageCalls, identity, String(req.params.task_id));
      if (!task || task.abandoned || task.subject !== identity.subject)
        throw new ApiError('OP-NOT-FOUND', 'No such task');
      res.json(internalView(task));
    }),
  );
}
