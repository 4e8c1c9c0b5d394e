/** The zones and lines of video tasks: the rules in force on the task row, every version beside it. */
import { type Clock, type Knex, type RuleSet, canonicalJson, isEmptyRuleSet } from '@vision/shared';
import { eventRow } from './task-events';
import { rowToTask, type TaskRow } from './task-row';

export interface RulesVersion {
  task: TaskRow;
  /** When this version was set (absent for version 0). */
  setAt?: Date;
  changed: boolean;
}

export class TaskRulesStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: Clock,
  ) {}

  static async insertVersion(
    trx: Knex,
    taskId: string,
    version: number,
    rules: RuleSet,
    at: Date,
  ): Promise<void> {
    await trx('task_rule_versions').insert({
      task_id: taskId,
      version,
      rules: JSON.stringify(rules),
      created_at: at,
    });
  }

  /** When the task's current rules version was set (read through `q`, a transaction or the pool). */
  async setAt(task: TaskRow, q: Knex = this.knex): Promise<Date | undefined> {
    if (task.rules_version === 0) return undefined;
    const row = (await q('task_rule_versions')
      .where({ task_id: task.task_id, version: task.rules_version })
      .first('created_at')) as { created_at: Date | string } | undefined;
    return row ? new Date(row.created_at) : undefined;
  }

  /**
   * Replaces the task's rules. A set equal to the one in force (after defaults; none in force counts as the
   * empty set) changes nothing; any other is the next version, stored and announced (`task.rules_changed`,
   * carrying the rules) in the same transaction. Undefined when the task is gone.
   */
  async replace(taskId: string, rules: RuleSet): Promise<RulesVersion | undefined> {
    const now = this.clock.now();
    return this.knex.transaction(async (trx) => {
      const cur = await trx('tasks').where({ task_id: taskId }).forUpdate().first();
      if (!cur) return undefined;
      const task = rowToTask(cur as Record<string, unknown>);
      const same =
        task.rules_version === 0 ? isEmptyRuleSet(rules) : canonicalJson(task.rules) === canonicalJson(rules);
      if (same) return { task, setAt: await this.setAt(task, trx), changed: false };
      const version = task.rules_version + 1;
      const [updated] = await trx('tasks')
        .where({ task_id: taskId })
        .update({ rules: JSON.stringify(rules), rules_version: version })
        .returning('*');
      await TaskRulesStore.insertVersion(trx, taskId, version, rules, now);
      const next = rowToTask(updated as Record<string, unknown>);
      await trx('outbox').insert(eventRow(next, 'task.rules_changed', now));
      return { task: next, setAt: now, changed: true };
    });
  }
}
