import { type Knex, type Migration, type RuleSet, ruleSetBytes, rulesDigest } from '@vision/shared';

/** Rows read per round while the stored rules are moved. */
const PAGE = 500;

const parsed = (v: unknown): RuleSet => (typeof v === 'string' ? JSON.parse(v) : v) as RuleSet;

/** Stores `rules` once for its task (nothing when the task holds that content already); returns its digest. */
async function keep(knex: Knex, taskId: string, rules: RuleSet, at: unknown): Promise<string> {
  const digest = rulesDigest(rules);
  await knex('task_rule_sets')
    .insert({
      task_id: taskId,
      digest,
      rules: JSON.stringify(rules),
      bytes: ruleSetBytes(rules),
      created_at: at,
    })
    .onConflict(['task_id', 'digest'])
    .ignore();
  return digest;
}

/**
 * A task's rule sets are stored once each, addressed by their content (`rulesDigest`): the task row and each
 * version refer to a set by its digest instead of holding it, so a version that comes back to an earlier set
 * stores no rules again. The rules already stored move into `task_rule_sets`.
 */
export const ruleSetsMigration: Migration = {
  name: '008_rule_sets',
  async up(knex) {
    await knex.schema.createTable('task_rule_sets', (t) => {
      t.string('task_id', 64).notNullable();
      t.string('digest', 64).notNullable();
      t.jsonb('rules').notNullable();
      t.integer('bytes').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.primary(['task_id', 'digest']);
    });
    await knex.schema.alterTable('task_rule_versions', (t) => {
      t.string('digest', 64).nullable();
    });
    await knex.schema.alterTable('tasks', (t) => {
      t.string('rules_digest', 64).nullable();
    });
    for (let after = { task_id: '', version: -1 }; ;) {
      const rows = (await knex('task_rule_versions')
        .whereRaw('(task_id, version) > (?, ?)', [after.task_id, after.version])
        .orderBy([{ column: 'task_id' }, { column: 'version' }])
        .limit(PAGE)
        .select('task_id', 'version', 'rules', 'created_at')) as {
        task_id: string;
        version: number;
        rules: unknown;
        created_at: unknown;
      }[];
      for (const r of rows) {
        const digest = await keep(knex, r.task_id, parsed(r.rules), r.created_at);
        await knex('task_rule_versions').where({ task_id: r.task_id, version: r.version }).update({ digest });
      }
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1];
    }
    for (let after = ''; ;) {
      const rows = (await knex('tasks')
        .whereNotNull('rules')
        .andWhere('task_id', '>', after)
        .orderBy('task_id')
        .limit(PAGE)
        .select('task_id', 'rules', 'updated_at')) as {
        task_id: string;
        rules: unknown;
        updated_at: unknown;
      }[];
      for (const r of rows) {
        const rules_digest = await keep(knex, r.task_id, parsed(r.rules), r.updated_at);
        await knex('tasks').where({ task_id: r.task_id }).update({ rules_digest });
      }
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1].task_id;
    }
    await knex.raw('ALTER TABLE task_rule_versions ALTER COLUMN digest SET NOT NULL');
    await knex.schema.alterTable('task_rule_versions', (t) => {
      t.dropColumn('rules');
    });
    await knex.schema.alterTable('tasks', (t) => {
      t.dropColumn('rules');
    });
  },
  async down(knex) {
    await knex.schema.alterTable('tasks', (t) => {
      t.jsonb('rules').nullable();
    });
    await knex.schema.alterTable('task_rule_versions', (t) => {
      t.jsonb('rules').nullable();
    });
    await knex.raw(
      `UPDATE tasks t SET rules = s.rules FROM task_rule_sets s
        WHERE s.task_id = t.task_id AND s.digest = t.rules_digest`,
    );
    await knex.raw(
      `UPDATE task_rule_versions v SET rules = s.rules FROM task_rule_sets s
        WHERE s.task_id = v.task_id AND s.digest = v.digest`,
    );
    await knex.raw('ALTER TABLE task_rule_versions ALTER COLUMN rules SET NOT NULL');
    await knex.schema.alterTable('task_rule_versions', (t) => {
      t.dropColumn('digest');
    });
    await knex.schema.alterTable('tasks', (t) => {
      t.dropColumn('rules_digest');
    });
    await knex.schema.dropTableIfExists('task_rule_sets');
  },
};
