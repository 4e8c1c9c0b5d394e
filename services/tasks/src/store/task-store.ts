/** Writes of tasks, their create claims and their outbox events, each in one transaction (knex). */
import { type ClaimRef, type Clock, metrics, toTaskReason, type Knex } from '@vision/shared';
import { resultExpiresAt } from '../domain/retention';
import { type TaskTrigger, transition } from '../domain/state-machine';
import { CLAIMS_TABLE, TaskClaims } from './task-claims';
import { eventRow } from './task-events';
import { TaskQueueStore } from './task-queue';
import { type RuleHistoryLimits, TaskRulesStore } from './task-rules';
import {
  ACTIVE,
  type InsertOutcome,
  type NewVideoTask,
  type TaskEvent,
  type TaskRow,
  rowToTask,
} from './task-row';

export * from './task-row';

/** The defaults of TASKS_RULES_MAX_VERSIONS and TASKS_RULES_MAX_BYTES. */
export const DEFAULT_RULE_LIMITS: RuleHistoryLimits = { maxVersions: 1000, maxBytes: 1_048_576 };

export class TaskStore extends TaskQueueStore {
  /** The create requests' idempotency claims (the shared claim mechanism's store). */
  readonly claims: TaskClaims;
  /** Zones and lines: their versions and replacement. */
  readonly rules: TaskRulesStore;

  constructor(knex: Knex, clock: Clock, ruleLimits: RuleHistoryLimits = DEFAULT_RULE_LIMITS) {
    super(knex, clock);
    this.claims = new TaskClaims(knex);
    this.rules = new TaskRulesStore(knex, clock, ruleLimits);
  }

  /**
   * Inserts the task (status submitting) and moves its create's claim `ref` to settling, in one
   * transaction, holding the subject's lock row so that concurrent creates count active tasks one
   * after the other. `lost` when the claim is no longer this attempt's (its lease lapsed and another
   * request took it over).
   */
  async insertSubmitting(t: NewVideoTask, ref: ClaimRef, maxActive: number): Promise<InsertOutcome> {
    const now = this.clock.now();
    const outcome = await this.knex.transaction(async (trx): Promise<InsertOutcome> => {
      await trx('subject_locks').insert({ subject: t.subject }).onConflict('subject').ignore();
      await trx('subject_locks').where({ subject: t.subject }).forUpdate().first();
      const active = await trx('tasks')
        .where({ subject: t.subject, kind: 'video' })
        .whereIn('status', ACTIVE)
        .count<{ n: string }[]>({ n: '*' });
      const n = Number(active[0]?.n ?? 0);
      if (n >= maxActive) return { kind: 'too_many_active', active: n };
      if (!(await this.claims.markSettling(ref, {}, trx))) return { kind: 'lost' };
      const row = {
        task_id: t.task_id,
        subject: t.subject,
        kind: 'video',
        source_type: t.source_type,
        request_id: t.request_id,
        scene_code: t.scene_code,
        status: 'submitting',
        business_threshold: t.business_threshold,
        lower_bound: t.lower_bound,
        stream_url: t.stream_url ?? null,
        stream_url_redacted: t.stream_url_redacted ?? null,
        object_key: t.object_key ?? null,
        object_sha256: t.object_sha256 ?? null,
        object_size: t.object_size ?? null,
        created_at: now,
        updated_at: now,
        result_expires_at: resultExpiresAt(now, t.retention_days),
        rules_digest: t.rules ? (await TaskRulesStore.keep(trx, t.task_id, t.rules, now)).digest : null,
        rules_version: t.rules ? 1 : 0,
      };
      const [created] = await trx('tasks').insert(row).returning('*');
      if (row.rules_digest) await TaskRulesStore.insertVersion(trx, t.task_id, 1, row.rules_digest, now);
      return { kind: 'created', task: rowToTask(created as Record<string, unknown>) };
    });
    if (outcome.kind === 'created') metrics.taskTransitions.inc({ from: 'none', to: 'submitting' });
    return outcome;
  }

  /** Removes a task that never became visible (quota exhausted, backend unreachable) and its claim: the key is free again. */
  async discard(taskId: string): Promise<void> {
    await this.knex.transaction(async (trx) => {
      await trx(CLAIMS_TABLE).where({ task_id: taskId }).delete();
      await trx('tasks').where({ task_id: taskId, announced: false }).delete();
      // Its rule versions and sets go with it (an announced task stays, and keeps them).
      for (const table of ['task_rule_versions', 'task_rule_sets'])
        await trx(table)
          .where({ task_id: taskId })
          .whereNotExists(trx('tasks').where({ task_id: taskId }).select('task_id'))
          .delete();
    });
  }

  async setRefundPending(taskId: string, pending: boolean): Promise<void> {
    await this.knex('tasks').where({ task_id: taskId }).update({ refund_pending: pending });
  }

  async markAbandoned(taskId: string): Promise<void> {
    await this.knex('tasks').where({ task_id: taskId, status: 'submitting' }).update({ abandoned: true });
  }

  async setStopRequested(taskId: string): Promise<void> {
    await this.knex('tasks').where({ task_id: taskId }).update({ stop_requested: true });
  }

  /**
   * Applies a state-machine trigger. The row is locked, the move checked against SPEC.md 3, the row
   * updated and the event written to the outbox, all in one transaction. Returns the updated task, or
   * undefined when the move is not allowed from the task's current status (someone else moved it).
   */
  async move(
    taskId: string,
    trigger: TaskTrigger,
    patch: { reason?: string | null; refund_pending?: boolean } = {},
  ): Promise<TaskRow | undefined> {
    const now = this.clock.now();
    let from: string | undefined;
    const moved = await this.knex.transaction(async (trx) => {
      const cur = await trx('tasks').where({ task_id: taskId }).forUpdate().first();
      if (!cur) return undefined;
      const task = rowToTask(cur as Record<string, unknown>);
      const t = transition(task.status, trigger);
      if (!t.ok) return undefined;
      from = task.status;
      const [updated] = await trx('tasks')
        .where({ task_id: taskId })
        .update({
          status: t.to,
          updated_at: now,
          announced: true,
          ...(patch.reason !== undefined ? { reason: storedReason(patch.reason) } : {}),
          ...(patch.refund_pending !== undefined ? { refund_pending: patch.refund_pending } : {}),
        })
        .returning('*');
      const next = rowToTask(updated as Record<string, unknown>);
      await this.writeEvent(
        trx,
        next,
        task.announced ? 'task.status_changed' : 'task.created',
        now,
        task.status,
      );
      return next;
    });
    if (moved && from) metrics.taskTransitions.inc({ from, to: moved.status });
    return moved;
  }

  private async writeEvent(
    trx: Knex,
    task: TaskRow,
    type: TaskEvent['type'],
    now: Date,
    previous?: string,
  ): Promise<void> {
    // A task's first event brings its rule set: results has had none of it before.
    const rules =
      type === 'task.created' && task.kind === 'video' && task.rules_digest !== null
        ? await TaskRulesStore.content(trx, task.task_id, task.rules_digest)
        : undefined;
    await trx('outbox').insert(eventRow(task, type, now, previous, rules));
  }

  /**
   * Image call records (the images service's `vision.image-calls`); idempotent by task id. Writing the
   * record of the same call again replaces its status and results summary, unless the stored one is
   * newer (an older record delivered again). A new record and its `task.created` event are written by
   * one statement (an insert that skips an existing id, and the outbox row of what it inserted): four
   * statements fewer per image call than the transaction a rewrite takes. `created_at` and `updated_at`
   * are the record's own (now when absent).
   */
  async insertImageTask(r: {
    task_id: string;
    subject: string;
    request_id: string;
    scene_code: string;
    status: string;
    business_threshold: number;
    lower_bound: number;
    results_summary?: unknown;
    retention_days: number;
    created_at?: Date;
    updated_at?: Date;
  }): Promise<{ task: TaskRow; created: boolean }> {
    const now = this.clock.now();
    const createdAt = r.created_at ?? now;
    const updatedAt = r.updated_at ?? createdAt;
    const row = {
      task_id: r.task_id,
      subject: r.subject,
      kind: 'image',
      request_id: r.request_id,
      scene_code: r.scene_code,
      status: r.status,
      business_threshold: r.business_threshold,
      lower_bound: r.lower_bound,
      results_summary: r.results_summary === undefined ? null : JSON.stringify(r.results_summary),
      announced: true,
      created_at: createdAt,
      updated_at: updatedAt,
      result_expires_at: resultExpiresAt(createdAt, r.retention_days),
    };
    const event = eventRow(rowToTask(row), 'task.created', now);
    const insert = this.knex('tasks').insert(row).onConflict('task_id').ignore().returning('*').toSQL();
    const eventCols = Object.keys(event);
    const inserted = (await this.knex.raw(
      `with ins as (${insert.sql}), ev as (
         insert into outbox (${eventCols.map(() => '??').join(', ')})
         select ${eventCols.map(() => '?').join(', ')} from ins
       )
       select * from ins`,
      [...insert.bindings, ...eventCols, ...Object.values(event)],
    )) as { rows: Record<string, unknown>[] };
    if (inserted.rows.length === 1) return { task: rowToTask(inserted.rows[0]), created: true };
    return this.knex.transaction(async (trx) => {
      const existing = await trx('tasks').where({ task_id: r.task_id }).forUpdate().first();
      if (!existing) {
        // Removed since the insert above met it: written again, as a new record.
        const [created] = await trx('tasks').insert(row).returning('*');
        const task = rowToTask(created as Record<string, unknown>);
        await this.writeEvent(trx, task, 'task.created', now);
        return { task, created: true };
      }
      const task = rowToTask(existing as Record<string, unknown>);
      // The images service writes the record again when the outcome changed after the first
      // write (quota did not grant the images of an expired hold; a retry with the same key ran
      // the call again): its latest summary stands. A record of another caller is never touched.
      const same = task.kind === 'image' && task.subject === r.subject && task.request_id === r.request_id;
      if (!same || r.results_summary === undefined) return { task, created: false };
      if (r.updated_at && task.updated_at > r.updated_at) return { task, created: false };
      const [updated] = await trx('tasks')
        .where({ task_id: r.task_id })
        .update({ status: r.status, results_summary: row.results_summary, updated_at: r.updated_at ?? now })
        .returning('*');
      return { task: rowToTask(updated as Record<string, unknown>), created: false };
    });
  }

  /** Marks a task expired: hidden from callers, stream credentials and object key dropped. */
  async markExpired(taskId: string): Promise<void> {
    const now = this.clock.now();
    await this.knex('tasks')
      .where({ task_id: taskId })
      .update({ expired_at: now, stream_url: null, object_key: null, updated_at: now });
  }
}

/** Every reason is stored as a code of the closed list (packages/shared task-reasons), at most 200 characters. */
function storedReason(reason: string | null): string | null {
  return reason === null ? null : toTaskReason(reason);
}
