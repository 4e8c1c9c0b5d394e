/** The outbox rows of task events (vision.task-events, docs/INTERNAL.md). */
import { randomUUID } from 'node:crypto';
import { type RuleSet, TOPICS, outboxRow, taskReasonCode } from '@vision/shared';
import { type TaskEvent, type TaskRow, TASKS_OUTBOX } from './task-row';

/** An image call's counts from its results summary (`{images, succeeded, failed}`), when it has one. */
function imageCounts(summary: unknown): TaskEvent['images'] {
  const s = (typeof summary === 'string' ? JSON.parse(summary) : summary) as
    { images?: unknown; succeeded?: unknown; failed?: unknown } | null | undefined;
  if (!s || typeof s.images !== 'number' || typeof s.succeeded !== 'number' || typeof s.failed !== 'number')
    return undefined;
  return { total: s.images, succeeded: s.succeeded, failed: s.failed };
}

/**
 * The outbox row of a task event, keyed by task id: the task's state, and for webhooks the status it left
 * (`previous_status`), the reason code of its end and the request that created it. A video task with rules
 * names its rule set by digest; `rules`, the set itself, goes on the events that bring a set new to the task.
 */
export function eventRow(
  task: TaskRow,
  type: TaskEvent['type'],
  now: Date,
  previous?: string,
  rules?: RuleSet,
) {
  const images = task.kind === 'image' ? imageCounts(task.results_summary) : undefined;
  const event: TaskEvent = {
    schema: 1,
    event_id: randomUUID(),
    type,
    task_id: task.task_id,
    subject: task.subject,
    kind: task.kind,
    scene_code: task.scene_code,
    status: task.status,
    business_threshold: task.business_threshold,
    lower_bound: task.lower_bound,
    result_expires_at: task.result_expires_at.toISOString(),
    occurred_at: now.toISOString(),
    request_id: task.request_id,
    ...(previous !== undefined ? { previous_status: previous } : {}),
    ...(task.reason && taskReasonCode(task.reason) ? { reason: taskReasonCode(task.reason) } : {}),
    ...(images ? { images } : {}),
    ...(task.kind === 'video' && task.rules_version > 0 && task.rules_digest
      ? { rules_version: task.rules_version, rules_digest: task.rules_digest, ...(rules ? { rules } : {}) }
      : {}),
  };
  return outboxRow(TASKS_OUTBOX, TOPICS.taskEvents, task.task_id, event, now);
}
