/**
 * Fair share of the inference slots at creation (domain/fair-share.ts), decided before anything is
 * charged: a live task starts now or is refused (429 fair_share); a file task starts now or waits in
 * the queue (201, status submitting), or is refused when the queue is full (503 queue_full).
 */
import { ApiError, REASON } from '@vision/shared';
import { decideFile, decideLive } from '../domain/fair-share';
import { inferenceSlots, type TaskContext } from '../ports';
import type { TaskRow } from '../store/task-store';

export type Plan = 'start' | 'queue';

export async function planAdmission(ctx: TaskContext, task: TaskRow): Promise<Plan> {
  const { settings } = ctx;
  const view = await ctx.store.slotView(await inferenceSlots(ctx), task.task_id);
  if (task.source_type === 'file') {
    const d = decideFile(view, task.subject, settings.queueMax);
    if (d.kind === 'refuse')
      throw new ApiError(
        'OP-TASK-UPSTREAM-DOWN',
        `The inference backend is at capacity and ${settings.queueMax} file tasks are waiting; retry later`,
        { reason: REASON.queue_full, limit: settings.queueMax },
        { 'Retry-After': '30' },
      );
    return d.kind;
  }
  const d = decideLive(view, task.subject);
  if (d.kind === 'refuse')
    throw new ApiError(
      'OP-QUOTA-RATE-LIMITED',
      `This key holds its share (${d.share}) of the inference backend's slots while other keys wait; retry later`,
      { reason: REASON.fair_share, limit: d.share, active: d.held },
      { 'Retry-After': '10' },
    );
  return 'start';
}
