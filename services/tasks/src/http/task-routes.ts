/** Reading and stopping tasks (SPEC.md 4.3, 4.5, history), and the scene list (4.7). */
import type { Express, Request, Response } from 'express';
import { z } from 'zod';
import { ApiError, REASON, identityOf, invalidRequest, route } from '@vision/shared';
import { decodeCursor, encodeCursor } from '../domain/cursor';
import { isTaskStatus } from '../domain/state-machine';
import { toPublicTask } from '../domain/task-view';
import type { TaskRow } from '../store/task-store';
import { stopTask } from '../use-cases/stop-task';
import type { HttpDeps } from './deps';
import { ownTask } from './own-task';
import { publicScenes } from './scene-list';

const listQuery = z
  .object({
    status: z.string().optional(),
    kind: z.enum(['video', 'image']).optional(),
    limit: z.coerce.number().int().min(1).max(100).optional(),
    cursor: z.string().max(512).optional(),
  })
  .strict();

export function mountTaskRoutes(app: Express, d: HttpDeps): void {
  const { store } = d.ctx;

  app.get(
    '/api/op/v1/scenes',
    route(async (_req, res) => {
      identityOf(res);
      res.json({ scenes: await publicScenes(d.scenes, d.settings.businessThreshold) });
    }),
  );

  const own = (req: Request, res: Response): Promise<TaskRow> => ownTask(store, req, res, d.imageCalls);

  app.get(
    '/v1/vision/tasks/:task_id',
    route(async (req, res) => {
      res.json(toPublicTask(await own(req, res)));
    }),
  );

  app.post(
    '/v1/vision/tasks/:task_id/stop',
    route(async (req, res) => {
      const task = await own(req, res);
      if (task.kind !== 'video')
        throw new ApiError('OP-TASK-NOT-STOPPABLE', 'Image detection calls have already ended', {
          status: task.status,
        });
      const r = await stopTask(d.ctx, task);
      res.status(r.status).json(toPublicTask(r.task));
    }),
  );

  app.get(
    '/v1/vision/tasks',
    route(async (req, res) => {
      const identity = identityOf(res);
      const q = listQuery.safeParse(req.query);
      if (!q.success) {
        const i = q.error.issues[0];
        throw invalidRequest(
          i.code === 'unrecognized_keys' ? 'Unknown query parameter' : `Invalid ${i.path.join('.')}`,
          i.code === 'unrecognized_keys' ? REASON.unknown_field : REASON.invalid_query,
        );
      }
      if (q.data.status !== undefined && !isTaskStatus(q.data.status))
        throw invalidRequest('Invalid status filter', REASON.invalid_query);
      const after = q.data.cursor ? decodeCursor(q.data.cursor) : undefined;
      if (q.data.cursor && !after) throw invalidRequest('Invalid cursor', REASON.invalid_cursor);
      const limit = q.data.limit ?? 20;
      const rows = await store.list(identity.subject, {
        status: q.data.status,
        kind: q.data.kind,
        after,
        limit: limit + 1,
      });
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      res.json({
        items: page.map(toPublicTask),
        next_cursor:
          rows.length > limit && last
            ? encodeCursor({ createdAt: last.created_at.toISOString(), taskId: last.task_id })
            : '',
      });
    }),
  );
}
