/** Reads of tasks (knex; Postgres or PGlite). */
import type { Clock, Knex } from '@vision/shared';
import type { ListPosition } from '../domain/cursor';
import { TASK_STATUSES, type TaskStatus } from '../domain/state-machine';
import { ACTIVE, type TaskRow, rowToTask } from './task-row';

export class TaskReads {
  constructor(
    protected readonly knex: Knex,
    protected readonly clock: Clock,
  ) {}

  async get(taskId: string): Promise<TaskRow | undefined> {
    const r = await this.knex('tasks').where({ task_id: taskId }).first();
    return r ? rowToTask(r as Record<string, unknown>) : undefined;
  }

  /** True when some task row refers to the uploaded object `key`. */
  async referencesObject(key: string): Promise<boolean> {
    const r = await this.knex('tasks').where({ object_key: key }).first('task_id');
    return r !== undefined;
  }

  async countActive(subject: string): Promise<number> {
    const r = await this.knex('tasks')
      .where({ subject, kind: 'video' })
      .whereIn('status', ACTIVE)
      .count<{ n: string }[]>({ n: '*' });
    return Number(r[0]?.n ?? 0);
  }

  async refundsPending(limit: number): Promise<TaskRow[]> {
    const rows = await this.knex('tasks').where({ refund_pending: true }).limit(limit);
    return rows.map((r) => rowToTask(r as Record<string, unknown>));
  }

  async list(
    subject: string,
    f: { status?: string; kind?: string; after?: ListPosition; limit: number },
  ): Promise<TaskRow[]> {
    const q = this.knex('tasks').where({ subject, abandoned: false }).whereNull('expired_at');
    if (f.status) q.where('status', f.status);
    if (f.kind) q.where('kind', f.kind);
    if (f.after) {
      const at = new Date(f.after.createdAt);
      const id = f.after.taskId;
      // Block bodies: knex builders are thenable, and a grouping callback must not return one.
      void q.where((w) => {
        void w.where('created_at', '<', at).orWhere((w2) => {
          void w2.where('created_at', at).where('task_id', '<', id);
        });
      });
    }
    const rows = await q
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'task_id', order: 'desc' },
      ])
      .limit(f.limit);
    return rows.map((r) => rowToTask(r as Record<string, unknown>));
  }

  async inStatus(statuses: TaskStatus[], limit: number): Promise<TaskRow[]> {
    // Queued tasks belong to the dispatcher (store/task-queue.ts), not to the other loops.
    const q = this.knex('tasks').where('kind', 'video').whereIn('status', statuses).whereNull('queued_at');
    const rows = await q.orderBy('updated_at', 'asc').limit(limit);
    return rows.map((r) => rowToTask(r as Record<string, unknown>));
  }

  /**
   * Tasks left `submitting` (not queued) that no create owns any more, untouched since `before`: a
   * dispatcher took them out of the queue and stopped (the tasks of a create that died are its claim's,
   * finished by the claim sweeper).
   */
  async orphanedSubmitting(before: Date, limit: number): Promise<TaskRow[]> {
    const rows = await this.knex('tasks')
      .where({ kind: 'video', status: 'submitting' })
      .whereNull('queued_at')
      .where('updated_at', '<', before)
      .whereNotExists((q) => {
        void q
          .select(1)
          .from('idempotency_keys')
          .whereRaw('idempotency_keys.task_id = tasks.task_id')
          .whereIn('state', ['running', 'settling']);
      })
      .orderBy('updated_at', 'asc')
      .limit(limit);
    return rows.map((r) => rowToTask(r as Record<string, unknown>));
  }

  /** Video tasks that became `refunded` with one of `reasons` at or after `since`, newest first. */
  async refundedSince(reasons: string[], since: Date, limit: number): Promise<TaskRow[]> {
    const rows = await this.knex('tasks')
      .where({ kind: 'video', status: 'refunded' })
      // Stored reasons read `code: message` (task-reasons.ts); older rows hold the bare code.
      .where((q) => {
        for (const r of reasons) void q.orWhere('reason', r).orWhere('reason', 'like', `${r}:%`);
      })
      .where('updated_at', '>=', since)
      .orderBy('updated_at', 'desc')
      .limit(limit);
    return rows.map((r) => rowToTask(r as Record<string, unknown>));
  }

  async expiredUnmarked(now: Date, limit: number): Promise<TaskRow[]> {
    const rows = await this.knex('tasks')
      .where('result_expires_at', '<=', now)
      .whereNull('expired_at')
      .whereNotIn('status', ACTIVE)
      .orderBy('result_expires_at', 'asc')
      .limit(limit);
    return rows.map((r) => rowToTask(r as Record<string, unknown>));
  }

  /** Video tasks by status (vision_tasks, read at scrape time). */
  async countByStatus(): Promise<Array<[{ status: string }, number]>> {
    const rows = (await this.knex('tasks')
      .where({ kind: 'video' })
      .select('status')
      .count<{ status: string; n: string }[]>({ n: '*' })
      .groupBy('status')) as { status: string; n: string | number }[];
    const by = new Map(rows.map((r) => [r.status, Number(r.n)]));
    return TASK_STATUSES.map((status) => [{ status }, by.get(status) ?? 0]);
  }
}
