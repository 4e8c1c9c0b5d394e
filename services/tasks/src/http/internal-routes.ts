/** Internal endpoints for other services (docs/INTERNAL.md, tasks). */
import type { Express } from 'express';
import { z } from 'zod';
import { ApiError, REASON, identityOf, invalidRequest, isUuid, route } from '@vision/shared';
import { toPublicTask } from '../domain/task-view';
import type { TaskRow } from '../store/task-store';
import type { HttpDeps } from './deps';
import { strictBody } from './validation';

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
      identityOf(res);
      const task = await store.get(String(req.params.task_id));
      if (!task || task.abandoned) throw new ApiError('OP-NOT-FOUND', 'No such task');
      res.json(internalView(task));
    }),
  );

  app.post(
    '/internal/v1/image-tasks',
    route(async (req, res) => {
      const identity = identityOf(res);
      const body = strictBody(
        {
          task_id: z.string().min(1).max(64),
          request_id: z.string().refine(isUuid, 'expected a UUID'),
          scene_code: z.string().max(64),
          status: z.enum(['succeeded', 'failed']),
          results_summary: z.unknown().optional(),
        },
        req.body,
      );
      const scene = (await d.scenes.list()).find((s) => s.scene_code === body.scene_code);
      if (!scene) throw new ApiError('OP-TASK-SCENE-UNAVAILABLE', 'scene_code does not exist');
      const r = await store.insertImageTask({
        task_id: body.task_id,
        subject: identity.subject,
        request_id: body.request_id,
        scene_code: body.scene_code,
        status: body.status,
        business_threshold: d.settings.businessThreshold,
        lower_bound: scene.lower_bound,
        results_summary: body.results_summary,
        retention_days: d.settings.retentionDays,
      });
      if (!r.created && r.task.subject !== identity.subject)
        throw invalidRequest('task_id already used', REASON.task_id_taken);
      d.ctx.signals.eventsWritten();
      res.status(r.created ? 201 : 200).json({ ...toPublicTask(r.task), subject: r.task.subject });
    }),
  );
}
