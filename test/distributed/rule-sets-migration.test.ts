/**
 * The migrations that store each rule set once, by content (tasks 008, results 004), on the stack's real
 * Postgres, over databases whose rows hold their rules: the same checks as on PGlite
 * (services/tasks/test/rule-sets-migration.test.ts, services/results/test/rule-sets-migration.test.ts).
 */
import { randomUUID } from 'node:crypto';
import knexFactory from 'knex';
import { createLogger, type Db, type Migration, openDb } from '@vision/shared';
import { readStackEnv } from '../../scripts/distributed/launcher';
import { upgradeKeepsEveryRuleSet } from '../../services/tasks/test/rule-sets-upgrade';
import { upgradeKeepsEveryAnalyticsRuleSet } from '../../services/results/test/rule-sets-upgrade';
import { describeDistributed } from './support';

/** Runs `check` on a fresh database of the stack's Postgres, under `schema`, and drops the database after. */
async function onPostgres(
  schema: string,
  check: (open: (m: Migration[]) => Promise<Db>) => Promise<void>,
): Promise<void> {
  const { pgUrl } = readStackEnv();
  const name = `rule_sets_upgrade_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = knexFactory({ client: 'pg', connection: `${pgUrl}/postgres` });
  await admin.raw(`create database "${name}"`);
  try {
    await check((migrations) =>
      openDb(
        { VISION_MODE: 'distributed', DATABASE_URL: `${pgUrl}/${name}`, VISION_DATA_DIR: '' },
        { schema, migrations, logger: createLogger('rule-sets-migration', { level: 'silent' }) },
      ),
    );
  } finally {
    await admin.raw(`drop database if exists "${name}" with (force)`);
    await admin.destroy();
  }
}

describeDistributed('rule sets stored once, migrations on Postgres', () => {
  it('tasks 008: rules on tasks and versions move into one set per content; the task reads and changes as before', async () => {
    await onPostgres('tasks', upgradeKeepsEveryRuleSet);
  }, 120_000);

  it('results 004: rules on analytics rows and in their snapshots move into one set per task; the engine resumes', async () => {
    await onPostgres('results', upgradeKeepsEveryAnalyticsRuleSet);
  }, 120_000);
});
