/**
 * The zones and lines of video tasks. Each rule set a task has had is stored once, addressed by its content
 * (`task_rule_sets`, keyed by task and `rulesDigest`); the task row names the set in force by its digest, and
 * every version (`task_rule_versions`) names its set the same way.
 */
import {
  type Clock,
  type Knex,
  type RuleSet,
  isEmptyRuleSet,
  ruleSetBytes,
  rulesDigest,
} from '@vision/shared';
import { isTerminal } from '../domain/state-machine';
import { eventRow } from './task-events';
import { rowToTask, type TaskRow } from './task-row';

export interface RulesVersion {
  task: TaskRow;
  /** The rules in force (the empty set while the task never had any). */
  rules: RuleSet;
  /** When this version was set (absent for version 0). */
  setAt?: Date;
  changed: boolean;
}

/** What a task's rule history may hold (docs/ANALYTICS.md, "Limits"). */
export interface RuleHistoryLimits {
  /** Versions per task (TASKS_RULES_MAX_VERSIONS). */
  maxVersions: number;
  /** Bytes of the distinct rule sets one task stores (TASKS_RULES_MAX_BYTES). */
  maxBytes: number;
}

/** A replacement the task's history has no room for: the limit it would pass. */
export interface HistoryFull {
  full: 'versions' | 'bytes';
  limit: number;
}

/** A task that has ended (succeeded, failed, stopped or refunded): its rules and events are final. */
export interface TaskEnded {
  ended: TaskRow;
}

export type ReplaceOutcome = RulesVersion | HistoryFull | TaskEnded | undefined;

const EMPTY: RuleSet = { zones: [], lines: [] };

export class TaskRulesStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
    private readonly limits: RuleHistoryLimits,
  ) {}

  /**
   * Stores `rules` for the task unless it holds that content already; `added` says whether it was new.
   * Returns its digest.
   */
  static async keep(
    trx: Knex,
    taskId: string,
    rules: RuleSet,
    at: Date,
  ): Promise<{ digest: string; added: boolean }> {
    const digest = rulesDigest(rules);
    const inserted = (await trx('task_rule_sets')
      .insert({
        task_id: taskId,
        digest,
        rules: JSON.stringify(rules),
        bytes: ruleSetBytes(rules),
        created_at: at,
      })
      .onConflict(['task_id', 'digest'])
      .ignore()
      .returning('digest')) as unknown[];
    return { digest, added: inserted.length === 1 };
  }

  static async insertVersion(
    trx: Knex,
    taskId: string,
    version: number,
    digest: string,
    at: Date,
  ): Promise<void> {
    await trx('task_rule_versions').insert({ task_id: taskId, version, digest, created_at: at });
  }

  /** The rule set the task stores under `digest` (read through `q`, a transaction or the pool). */
  static async content(q: Knex, taskId: string, digest: string): Promise<RuleSet | undefined> {
    const row = (await q('task_rule_sets').where({ task_id: taskId, digest }).first('rules')) as
      { rules: unknown } | undefined;
    if (!row) return undefined;
    return (typeof row.rules === 'string' ? JSON.parse(row.rules) : row.rules) as RuleSet;
  }

  /** The rules in force on `task`: the empty set while it never had any. */
  async current(task: TaskRow, q: Knex = this.knex): Promise<RuleSet> {
    if (task.rules_digest === null) return EMPTY;
    return (await TaskRulesStore.content(q, task.task_id, task.rules_digest)) ?? EMPTY;
  }

  /** When the task's current rules version was set (read through `q`, a transaction or the pool). */
  async setAt(task: TaskRow, q: Knex = this.knex): Promise<Date | undefined> {
    if (task.rules_version === 0) return undefined;
    const row = (await q('task_rule_versions')
      .where({ task_id: task.task_id, version: task.rules_version })
      .first('created_at')) as { created_at: Date | string } | undefined;
    return row ? new Date(row.created_at) : undefined;
  }

  /** Where the history of `task` has no room for `rules` (stored or not yet, of `digest`): the limit passed. */
  private async full(
    trx: Knex,
    task: TaskRow,
    rules: RuleSet,
    digest: string,
  ): Promise<HistoryFull | undefined> {
    const { maxVersions, maxBytes } = this.limits;
    if (task.rules_version >= maxVersions) return { full: 'versions', limit: maxVersions };
    const sets = (await trx('task_rule_sets').where({ task_id: task.task_id }).select('digest', 'bytes')) as {
      digest: string;
      bytes: number | string;
    }[];
    if (sets.some((s) => s.digest === digest)) return undefined;
    const stored = sets.reduce((n, s) => n + Number(s.bytes), 0);
    return stored + ruleSetBytes(rules) > maxBytes ? { full: 'bytes', limit: maxBytes } : undefined;
  }

  /**
   * Replaces the task's rules. A set equal to the one in force (after defaults; none in force counts as the
   * empty set) changes nothing; any other is the next version, stored and announced (`task.rules_changed`,
   * naming the set by digest, and carrying it when the task never had it) in the same transaction. A version
   * past the task's history limits is refused (HistoryFull) and changes nothing, and so is any replacement of
   * a task that has ended (TaskEnded): its event feed is over and no rule may add to it. Undefined when the
   * task is gone.
   */
  async replace(taskId: string, rules: RuleSet): Promise<ReplaceOutcome> {
    const now = this.clock.now();
    return this.knex.transaction(async (trx): Promise<ReplaceOutcome> => {
      const cur = await trx('tasks').where({ task_id: taskId }).forUpdate().first();
      if (!cur) return undefined;
      const task = rowToTask(cur as Record<string, unknown>);
      if (isTerminal(task.status)) return { ended: task };
      const digest = rulesDigest(rules);
      const same = task.rules_version === 0 ? isEmptyRuleSet(rules) : task.rules_digest === digest;
      if (same)
        return {
          task,
          rules: await this.current(task, trx),
          setAt: await this.setAt(task, trx),
          changed: false,
        };
      const full = await this.full(trx, task, rules, digest);
      if (full) return full;
      const version = task.rules_version + 1;
      const kept = await TaskRulesStore.keep(trx, taskId, rules, now);
      const [updated] = await trx('tasks')
        .where({ task_id: taskId })
        .update({ rules_digest: digest, rules_version: version })
        .returning('*');
      await TaskRulesStore.insertVersion(trx, taskId, version, digest, now);
      const next = rowToTask(updated as Record<string, unknown>);
      await trx('outbox').insert(
        eventRow(next, 'task.rules_changed', now, undefined, kept.added ? rules : undefined),
      );
      return { task: next, rules, setAt: now, changed: true };
    });
  }
}
