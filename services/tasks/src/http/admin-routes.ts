/** Operator endpoints (not through the gateway): their own bearer credential (TASKS_ADMIN_TOKEN), not a customer key. */
import { timingSafeEqual } from 'node:crypto';
import type { Express, NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import { ApiError, redactText, route } from '@vision/shared';
import { toPublicTask } from '../domain/task-view';
import { verifyTask } from '../use-cases/verify-task';
import type { HttpDeps } from './deps';
import { strictBody } from './validation';

export const ADMIN_PREFIX = '/internal/v1/admin';

function adminAuth(token: string | undefined) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const given = /^Bearer (.+)$/.exec(req.header('authorization') ?? '')?.[1];
    if (!token || !given) return next(new ApiError('OP-AUTH-REQUIRED', 'Operator credential required'));
    const a = Buffer.from(given);
    const b = Buffer.from(token);
    if (a.length !== b.length || !timingSafeEqual(a, b))
      return next(new ApiError('OP-AUTH-REQUIRED', 'Operator credential required'));
    next();
  };
}

export function mountAdminRoutes(app: Express, d: HttpDeps): void {
  const { store } = d.ctx;
  const admin = adminAuth(d.adminToken);
  app.post(
    `${ADMIN_PREFIX}/tasks/:task_id/verify`,
    admin,
    route(async (req, res) => {
      const body = strictBody({ created: z.boolean() }, req.body);
      const task = await verifyTask(d.ctx, String(req.params.task_id), body.created);
      res.json({ ...toPublicTask(task), subject: task.subject });
    }),
  );
  app.get(
    `${ADMIN_PREFIX}/tasks/:task_id`,
    admin,
    route(async (req, res) => {
      const task = await store.get(String(req.params.task_id));
      if (!task) throw new ApiError('OP-NOT-FOUND', 'No such task');
      res.json({
        ...toPublicTask(task),
        subject: task.subject,
        source_type: task.source_type,
        // Redacted again on the way out: a row stored under an older rule shows no more than the current one.
        stream_url: task.stream_url_redacted === null ? null : redactText(task.stream_url_redacted),
        object_key: task.object_key,
        stop_requested: task.stop_requested,
        refund_pending: task.refund_pending,
        ...(task.kind === 'image' ? { results_summary: task.results_summary } : {}),
      });
    }),
  );
  const maintenanceView = () => ({ enabled: d.create.isMaintenance(), breaker: d.ctx.inference.state() });
  app.get(
    `${ADMIN_PREFIX}/maintenance`,
    admin,
    route(async (_req, res) => {
      res.json(maintenanceView());
    }),
  );
  app.put(
    `${ADMIN_PREFIX}/maintenance`,
    admin,
    route(async (req, res) => {
      const body = strictBody({ enabled: z.boolean() }, req.body);
      d.create.setMaintenance(body.enabled);
      res.json(maintenanceView());
    }),
  );
}
