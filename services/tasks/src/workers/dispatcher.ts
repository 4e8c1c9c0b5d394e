/**
 * The queue of file tasks (store/task-queue.ts): ends the waits longer than TASKS_QUEUE_MAX_WAIT_MS
 * (refunded, queue_timeout), then starts queued tasks, oldest first among the subjects that may take a
 * slot (domain/fair-share.ts), until the backend is full. Each task is claimed by one conditional
 * update before it is submitted; a claimed task the process dies with is resubmitted by crash recovery.
 */
import { nextToStart, withStarted, type SlotView } from '../domain/fair-share';
import { inferenceSlots, type TaskContext, workerIdentity } from '../ports';
import { refundAndMove, submitTask } from '../use-cases/submission';

const without = (view: SlotView, taskId: string): SlotView => ({
  ...view,
  queued: view.queued.filter((q) => q.task_id !== taskId),
});

export async function expireQueued(ctx: TaskContext): Promise<number> {
  const before = new Date(ctx.clock.now().getTime() - ctx.settings.queueMaxWaitMs);
  let n = 0;
  for (const task of await ctx.store.queuedBefore(before, 100)) {
    if (!(await ctx.store.claim(task.task_id))) continue;
    await refundAndMove(ctx, task, 'submission_rejected', 'queue_timeout');
    n++;
  }
  return n;
}

/** Starts queued tasks while the backend takes them; returns how many it submitted. */
export async function dispatchQueued(ctx: TaskContext): Promise<number> {
  let view = await ctx.store.slotView(await inferenceSlots(ctx));
  let started = 0;
  for (let i = 0; i < 100; i++) {
    const next = nextToStart(view);
    if (!next) break;
    const task = await ctx.store.get(next.task_id);
    if (!task?.queued_at || ctx.inflight.has(next.task_id) || !(await ctx.store.claim(next.task_id))) {
      view = without(view, next.task_id);
      continue;
    }
    ctx.inflight.add(task.task_id);
    try {
      const r = await submitTask(ctx, workerIdentity(task.subject), task, 'queue');
      // Back in the queue: the backend is full (or unreachable) whatever our count says.
      if (r.task.queued_at) break;
      started++;
      view = withStarted(view, next);
    } finally {
      ctx.inflight.delete(task.task_id);
    }
  }
  return started;
}

export async function runQueue(ctx: TaskContext): Promise<void> {
  await expireQueued(ctx);
  await dispatchQueued(ctx);
}
