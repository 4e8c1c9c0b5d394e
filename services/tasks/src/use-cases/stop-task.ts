/**
 * A caller's stop (SPEC.md 4.5, domain/outcomes.ts stopRow). Running: stopping, then the stop driver;
 * the answer waits up to TASKS_STOP_WAIT_MS for `stopped`. Submitting/resolving: the stop is
 * remembered and carried out as soon as the task is running (202 with the current status). Ended:
 * OP-TASK-NOT-STOPPABLE. A file task waiting in the queue is withdrawn and refunded at once.
 */
import { ApiError } from '@vision/shared';
import { stopRow } from '../domain/outcomes';
import type { TaskContext } from '../ports';
import { refundAndMove } from './submission';
import type { TaskRow } from '../store/task-store';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function stopTask(
  ctx: TaskContext,
  task: TaskRow,
): Promise<{ status: 200 | 202; task: TaskRow }> {
  // A queued file task never reached the backend: taken out of the queue and refunded (its final status).
  if (task.status === 'submitting' && task.queued_at && (await ctx.store.claim(task.task_id)))
    return {
      status: 200,
      task: await refundAndMove(ctx, task, 'submission_rejected', 'withdrawn_from_queue'),
    };
  const row = stopRow(task.status);
  if (row.action === 'not_stoppable')
    throw new ApiError(row.code, `Task has already ended (${task.status})`, { status: task.status });
  if (row.action === 'defer_until_running') {
    await ctx.store.setStopRequested(task.task_id);
    // It may have become running in between: carry the stop out now then.
    const cur = (await ctx.store.get(task.task_id)) ?? task;
    if (cur.status === 'running') return stopTask(ctx, cur);
    return { status: row.status, task: cur };
  }
  if (row.action === 'stop_now') await ctx.store.move(task.task_id, row.trigger);
  ctx.signals.eventsWritten();
  const deadline = Date.now() + ctx.settings.stopWaitMs;
  for (;;) {
    await ctx.signals.driveStops();
    const cur = (await ctx.store.get(task.task_id)) ?? task;
    if (cur.status !== 'stopping' || Date.now() >= deadline) return { status: row.status, task: cur };
    await sleep(Math.min(200, Math.max(0, deadline - Date.now())));
  }
}
