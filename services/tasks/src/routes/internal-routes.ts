/** Internal endpoints for other services (docs/INTERNAL.md, tasks) and the operator endpoints. */
import { timingSafeEqual } from 'node:crypto';
import type { Express, NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import { ApiError, REASON, type SceneGate, identityOf, invalidRequest, isUuid, route } from '@vision/shared';
import { toPublicTask } from '../domain/task-view';
import type { TaskEngine } from '../task-engine';
import type { TaskRow, TaskStore } from '../store/task-store';
import { strictBody } from './validation';

export const ADMIN_PREFIX = '/internal/v1/admin';

export interface InternalRouteDeps {
  engine: TaskEngine;
  store: TaskStore;
  scenes: SceneGate;
  clock: { now(): Date };
  adminToken?: string;
  businessThreshold: number;
  retentionDays: number;
}

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

export function mountInternalRoutes(app: Express, d: InternalRouteDeps): void {
  app.get(
    '/internal/v1/tasks/:task_id',
    route(async (req, res) => {
      identityOf(res);
      const task = await d.store.get(String(req.params.task_id));
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
      const r = await d.store.insertImageTask({
        task_id: body.task_id,
        subject: identity.subject,
        request_id: body.request_id,
        scene_code: body.scene_code,
        status: body.status,
        business_threshold: d.businessThreshold,
        lower_bound: scene.lower_bound,
        results_summary: body.results_summary,
        retention_days: d.retentionDays,
      });
      if (!r.created && r.task.subject !== identity.subject)
        throw invalidRequest('task_id already used', REASON.task_id_taken);
      void d.engine.outbox.kick();
      res.status(r.created ? 201 : 200).json({ ...toPublicTask(r.task), subject: r.task.subject });
    }),
  );

  // Operator endpoints: their own bearer credential (TASKS_ADMIN_TOKEN), not a customer key.
  const admin = adminAuth(d.adminToken);
  app.post(
    `${ADMIN_PREFIX}/tasks/:task_id/verify`,
    admin,
    route(async (req, res) => {
      const body = strictBody({ created: z.boolean() }, req.body);
      const task = await d.engine.verify(String(req.params.task_id), body.created);
      res.json({ ...toPublicTask(task), subject: task.subject });
    }),
  );
  app.get(
    `${ADMIN_PREFIX}/tasks/:task_id`,
    admin,
    route(async (req, res) => {
      const task = await d.store.get(String(req.params.task_id));
      if (!task) throw new ApiError('OP-NOT-FOUND', 'No such task');
      res.json({
        ...toPublicTask(task),
        subject: task.subject,
        source_type: task.source_type,
        stream_url: task.stream_url_redacted,
        object_key: task.object_key,
        stop_requested: task.stop_requested,
        refund_pending: task.refund_pending,
        ...(task.kind === 'image' ? { results_summary: task.results_summary } : {}),
      });
    }),
  );
  const maintenanceView = () => ({ enabled: d.engine.isMaintenance(), breaker: d.engine.inference.state() });
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
      d.engine.setMaintenance(body.enabled);
      res.json(maintenanceView());
    }),
  );
}
