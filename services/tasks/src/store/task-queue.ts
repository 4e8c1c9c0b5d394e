/**
 * The queue of file tasks waiting for an inference slot (domain/fair-share.ts), kept in the task rows:
 * status `submitting` (charged, not yet submitted) with `queued_at` set. It lives in the tasks database,
 * not in the inference backend, so that a queued task survives a restart of tasks or of inference (the
 * backend keeps its jobs in memory only, and may be replaced by another engine). A row is taken out of
 * the queue by one conditional update (claim), so that two dispatchers never submit one task twice.
 */
import type { SlotView } from '../domain/fair-share';
import { TaskReads } from './task-reads';
import { type TaskRow, rowToTask } from './task-row';

/** States that hold an inference slot besides a submitting task that is not queued. */
const HOLDING = ['resolving', 'running', 'stopping'];

export class TaskQueueStore extends TaskReads {
  /** Slots held per subject and the queue (oldest first), leaving out the task `except` (being admitted). */
  async slotView(slots: number, except?: string): Promise<SlotView> {
    const held = (await this.knex('tasks')
      .where({ kind: 'video' })
      .where((q) => {
        void q.whereIn('status', HOLDING).orWhere((q2) => {
          void q2.where('status', 'submitting').whereNull('queued_at').where('abandoned', false);
        });
      })
      .modify((q) => {
        if (except) void q.whereNot('task_id', except);
      })
      .select('subject')
      .count<{ subject: string; n: string }[]>({ n: '*' })
      .groupBy('subject')) as { subject: string; n: string | number }[];
    const queued = (await this.knex('tasks')
      .where({ kind: 'video', status: 'submitting' })
      .whereNotNull('queued_at')
      .orderBy([
        { column: 'queued_at', order: 'asc' },
        { column: 'task_id', order: 'asc' },
      ])
      .limit(100_000)
      .select('task_id', 'subject')) as { task_id: string; subject: string }[];
    return {
      slots,
      holding: new Map(held.map((r) => [r.subject, Number(r.n)])),
      queued: queued.map((r) => ({ task_id: r.task_id, subject: r.subject })),
    };
  }

  /** Puts a submitting task (back) into the queue, at `at` (its old place) or now. */
  async enqueue(taskId: string, at?: Date): Promise<TaskRow | undefined> {
    const now = this.clock.now();
    const [row] = await this.knex('tasks')
      .where({ task_id: taskId, status: 'submitting' })
      .update({ queued_at: at ?? now, updated_at: now })
      .returning('*');
    return row ? rowToTask(row as Record<string, unknown>) : undefined;
  }

  /** Takes a task out of the queue; false when it is no longer queued (another dispatcher took it). */
  async claim(taskId: string): Promise<boolean> {
    const n = await this.knex('tasks')
      .where({ task_id: taskId, status: 'submitting' })
      .whereNotNull('queued_at')
      .update({ queued_at: null, updated_at: this.clock.now() });
    return Number(n) > 0;
  }

  /**
   * Counts one more start of a running task's lost job (domain/lost-job.ts), as seen with `restarts` earlier
   * starts. False when another replica counted it first, or started it again less than `sinceMs` ago.
   */
  async countJobRestart(taskId: string, restarts: number, sinceMs: number): Promise<boolean> {
    const now = this.clock.now();
    const n = await this.knex('tasks')
      .where({ task_id: taskId, status: 'running', job_restarts: restarts })
      .where((q) => {
        void q
          .whereNull('job_restarted_at')
          .orWhere('job_restarted_at', '<', new Date(now.getTime() - sinceMs));
      })
      .update({ job_restarts: restarts + 1, job_restarted_at: now, updated_at: now });
    return Number(n) > 0;
  }

  /** Queued tasks that joined the queue before `before`, oldest first. */
  async queuedBefore(before: Date, limit: number): Promise<TaskRow[]> {
    const rows = await this.knex('tasks')
      .where({ kind: 'video', status: 'submitting' })
      .where('queued_at', '<', before)
      .orderBy('queued_at', 'asc')
      .limit(limit);
    return rows.map((r) => rowToTask(r as Record<string, unknown>));
  }
}
