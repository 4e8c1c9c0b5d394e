import { type Migration, type RuleSet, rulesDigest } from '@vision/shared';

/** Rows read per round while the stored rules move. */
const PAGE = 500;

/**
 * Each rule set a task's analytics ran is stored once (`analytics_rule_sets`, keyed by task and `rulesDigest`);
 * analytics_tasks names the set in force by its digest instead of holding it, so that a step rewrites no
 * rules. The rules already stored move there, and the snapshots written when they held the rules too lose
 * that copy (the engine restores a snapshot with the rules of its row).
 */
export const ruleSetsMigration: Migration = {
  name: '004_analytics_rule_sets',
  async up(knex) {
    await knex.raw(`
      CREATE TABLE analytics_rule_sets (
        task_id text NOT NULL,
        digest text NOT NULL,
        rules text NOT NULL,
        PRIMARY KEY (task_id, digest)
      )`);
    await knex.raw('ALTER TABLE analytics_tasks ADD COLUMN rules_digest text');
    for (let after = ''; ;) {
      const rows = (await knex('analytics_tasks')
        .where('task_id', '>', after)
        .orderBy('task_id')
        .limit(PAGE)
        .select('task_id', 'rules', 'snapshot')) as {
        task_id: string;
        rules: string;
        snapshot: string | null;
      }[];
      for (const r of rows) {
        const rules = JSON.parse(r.rules) as RuleSet;
        const digest = rulesDigest(rules);
        await knex('analytics_rule_sets')
          .insert({ task_id: r.task_id, digest, rules: r.rules })
          .onConflict(['task_id', 'digest'])
          .ignore();
        let snapshot = r.snapshot;
        if (snapshot !== null) {
          const { rules: _held, ...rest } = JSON.parse(snapshot) as Record<string, unknown>;
          snapshot = JSON.stringify(rest);
        }
        await knex('analytics_tasks')
          .where({ task_id: r.task_id })
          .update({ rules_digest: digest, snapshot });
      }
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1].task_id;
    }
    await knex.raw('ALTER TABLE analytics_tasks ALTER COLUMN rules_digest SET NOT NULL');
    await knex.raw('ALTER TABLE analytics_tasks DROP COLUMN rules');
  },
  async down(knex) {
    await knex.raw('ALTER TABLE analytics_tasks ADD COLUMN rules text');
    await knex.raw(
      `UPDATE analytics_tasks t SET rules = s.rules FROM analytics_rule_sets s
        WHERE s.task_id = t.task_id AND s.digest = t.rules_digest`,
    );
    await knex.raw('ALTER TABLE analytics_tasks ALTER COLUMN rules SET NOT NULL');
    // The earlier release restores a snapshot from the rules it holds.
    for (let after = ''; ;) {
      const rows = (await knex('analytics_tasks')
        .where('task_id', '>', after)
        .whereNotNull('snapshot')
        .orderBy('task_id')
        .limit(PAGE)
        .select('task_id', 'rules', 'snapshot')) as { task_id: string; rules: string; snapshot: string }[];
      for (const r of rows) {
        const snapshot = { ...(JSON.parse(r.snapshot) as object), rules: JSON.parse(r.rules) as unknown };
        await knex('analytics_tasks')
          .where({ task_id: r.task_id })
          .update({ snapshot: JSON.stringify(snapshot) });
      }
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1].task_id;
    }
    await knex.raw('ALTER TABLE analytics_tasks DROP COLUMN rules_digest');
    await knex.raw('DROP TABLE IF EXISTS analytics_rule_sets');
  },
};
