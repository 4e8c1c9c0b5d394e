/**
 * Migration 008 of the tasks service (rule sets stored once, by content) on a database whose tasks and versions
 * hold their rules (001-007): each content becomes one set of its task, the task and its versions name it by
 * digest, and the task reads and changes its rules as before. Run on PGlite (rule-sets-migration.test.ts) and on
 * the stack's Postgres (test/distributed/rule-sets-migration.test.ts).
 */
import { type Db, type Migration, parseRules, type RuleSet, rulesDigest, systemClock } from '@vision/shared';
import { migrations } from '../src/store/migrations';
import { DEFAULT_RULE_LIMITS, TaskStore, rowToTask } from '../src/store/task-store';

const rules = (id: string): RuleSet => {
  const parsed = parseRules({ lines: [{ id, start: [0.1, 0.5], end: [0.9, 0.5] }] });
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.rules;
};

export async function upgradeKeepsEveryRuleSet(open: (m: Migration[]) => Promise<Db>): Promise<void> {
  const at = new Date(Date.now() - 60_000);
  const [a, b] = [rules('a'), rules('b')];
  const old = await open(migrations.filter((m) => m.name < '008'));
  try {
    await old.knex('tasks').insert({
      task_id: 'old-task',
      subject: 'upgrader',
      kind: 'video',
      source_type: 'stream',
      request_id: 'key-old',
      scene_code: 'person_vehicle',
      status: 'running',
      business_threshold: 0.8,
      lower_bound: 0.3,
      created_at: at,
      updated_at: at,
      result_expires_at: new Date(Date.now() + 86_400_000),
      rules: JSON.stringify(a),
      rules_version: 3,
    });
    for (const [version, set] of [a, b, a].entries())
      await old.knex('task_rule_versions').insert({
        task_id: 'old-task',
        version: version + 1,
        rules: JSON.stringify(set),
        created_at: at,
      });
  } finally {
    await old.close();
  }

  const db = await open(migrations);
  try {
    const sets = (await db.knex('task_rule_sets').where({ task_id: 'old-task' })) as { digest: string }[];
    expect(sets.map((s) => s.digest).sort()).toEqual([rulesDigest(a), rulesDigest(b)].sort());
    const versions = (await db.knex('task_rule_versions').orderBy('version')) as Record<string, unknown>[];
    expect(versions.map((v) => v.digest)).toEqual([a, b, a].map(rulesDigest));
    const store = new TaskStore(db.knex, systemClock, DEFAULT_RULE_LIMITS);
    const task = rowToTask(
      (await db.knex('tasks').where({ task_id: 'old-task' }).first()) as Record<string, unknown>,
    );
    expect(task).toMatchObject({ rules_version: 3, rules_digest: rulesDigest(a) });
    expect(await store.rules.current(task)).toEqual(a);
    expect(await store.rules.setAt(task)).toEqual(at);
    // The same rules are no change; another set is version 4, stored once.
    expect(await store.rules.replace('old-task', a)).toMatchObject({ changed: false });
    expect(await store.rules.replace('old-task', b)).toMatchObject({
      changed: true,
      task: { rules_version: 4 },
    });
    expect(await db.knex('task_rule_sets').where({ task_id: 'old-task' })).toHaveLength(2);
  } finally {
    await db.close();
  }
}
