/**
 * Migration 004 of the results service (each rule set of a task stored once; rows name it by digest) on a database
 * whose analytics rows, and the snapshots in them, hold their rules (001-003): the rules move, the snapshots lose
 * their copy, and the engine resumes where it was. Run on PGlite (rule-sets-migration.test.ts) and on the stack's
 * Postgres (test/distributed/rule-sets-migration.test.ts).
 */
import { type Db, type Migration, parseRules, rulesDigest } from '@vision/shared';
import { AnalyticsEngine } from '../src/domain/analytics';
import { AnalyticsStore } from '../src/store/analytics-store';
import { migrations } from '../src/store/migrations';
import { engineOf } from '../src/use-cases/run-analytics';

export async function upgradeKeepsEveryAnalyticsRuleSet(
  open: (m: Migration[]) => Promise<Db>,
): Promise<void> {
  const parsed = parseRules({ lines: [{ id: 'gate', start: [0.1, 0.5], end: [0.9, 0.5] }] });
  if (!parsed.ok) throw new Error(parsed.error.message);
  const rules = parsed.rules;
  const engine = AnalyticsEngine.create('old-task', rules, 2);
  engine.processFrame({ seq: 0, time_ms: 0, width: 640, height: 480, objects: [] });
  // What the earlier release wrote: the rules on the row, and again inside the snapshot.
  const oldSnapshot = { ...engine.snapshot(), rules };
  const old = await open(migrations.filter((m) => m.name < '004'));
  try {
    await old.knex('analytics_tasks').insert({
      task_id: 'old-task',
      rules_version: 2,
      rules: JSON.stringify(rules),
      snapshot: JSON.stringify(oldSnapshot),
      events_count: 0,
      rev: 7,
      updated_at: new Date(),
    });
  } finally {
    await old.close();
  }

  const db = await open(migrations);
  try {
    const row = (await db.knex('analytics_tasks').where({ task_id: 'old-task' }).first()) as Record<
      string,
      unknown
    >;
    expect(row).toMatchObject({ rules_version: 2, rules_digest: rulesDigest(rules) });
    expect('rules' in row).toBe(false);
    expect(JSON.parse(String(row.snapshot))).not.toHaveProperty('rules');
    const rec = await new AnalyticsStore(db.knex).get('old-task');
    expect(rec).toMatchObject({ rulesVersion: 2, rulesDigest: rulesDigest(rules), rules, rev: 7 });
    const resumed = engineOf(rec!);
    expect(resumed.lastSeq).toBe(0);
    expect(resumed.analytics()).toEqual(engine.analytics());
  } finally {
    await db.close();
  }
}
