/** The zones and lines of a video task: read and replace them (docs/API.md, "Zones, lines and their events"). */
import type { Express, Request, Response } from 'express';
import { ApiError, REASON, type RuleSet, invalidRequest, requireRules, route } from '@vision/shared';
import type { TaskRow } from '../store/task-store';
import type { HttpDeps } from './deps';
import { ownTask } from './own-task';

function rulesView(task: TaskRow, rules: RuleSet, setAt: Date | undefined) {
  return {
    task_id: task.task_id,
    rules_version: task.rules_version,
    zones: rules.zones,
    lines: rules.lines,
    ...(setAt ? { updated_at: setAt.toISOString() } : {}),
  };
}

export function mountRulesRoutes(app: Express, d: HttpDeps): void {
  const { store } = d.ctx;

  /** The caller's video task; an image call record answers 404 as an unknown task does. */
  const ownVideoTask = async (req: Request, res: Response): Promise<TaskRow> => {
    const task = await ownTask(store, req, res);
    if (task.kind !== 'video') throw new ApiError('OP-NOT-FOUND', 'No such video task');
    return task;
  };

  app.get(
    '/v1/vision/tasks/:task_id/rules',
    route(async (req, res) => {
      const task = await ownVideoTask(req, res);
      res.json(rulesView(task, await store.rules.current(task), await store.rules.setAt(task)));
    }),
  );

  app.put(
    '/v1/vision/tasks/:task_id/rules',
    route(async (req, res) => {
      const body: unknown = req.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw invalidRequest('Request body must be a JSON object', REASON.malformed_body);
      const rules = requireRules(body);
      const task = await ownVideoTask(req, res);
      const out = await store.rules.replace(task.task_id, rules);
      if (!out) throw new ApiError('OP-NOT-FOUND', 'No such task');
      if ('ended' in out)
        throw new ApiError(
          'OP-TASK-ENDED',
          `The task has ended (${out.ended.status}): its rules and events are final; replay other rules instead`,
          { status: out.ended.status },
        );
      if ('full' in out)
        throw invalidRequest(
          out.full === 'versions'
            ? `The task has had ${out.limit} rules versions, the most one task keeps`
            : `The task's rule sets would pass ${out.limit} bytes, the most one task keeps`,
          REASON.rule_history_full,
          { limit: out.full, maximum: out.limit },
        );
      if (out.changed) d.ctx.signals.eventsWritten();
      res.json(rulesView(out.task, out.rules, out.setAt));
    }),
  );
}
