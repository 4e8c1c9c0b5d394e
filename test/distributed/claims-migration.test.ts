/**
 * Migration 005 of the tasks service (idempotency keys become claims of the shared claim mechanism) on
 * the stack's real Postgres, over a database that 001-004 filled: the same check as on PGlite
 * (services/tasks/test/claims-migration.test.ts).
 */
import { randomUUID } from 'node:crypto';
import knexFactory from 'knex';
import { createLogger, openDb } from '@vision/shared';
import { readStackEnv } from '../../scripts/distributed/launcher';
import { upgradeKeepsEveryKey } from '../../services/tasks/test/claims-upgrade';
import { describeDistributed } from './support';

describeDistributed('tasks migration 005 on Postgres', () => {
  it('existing keys become claims; a task still submitting becomes a lapsed settling claim', async () => {
    const { pgUrl } = readStackEnv();
    const name = `claims_upgrade_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const admin = knexFactory({ client: 'pg', connection: `${pgUrl}/postgres` });
    await admin.raw(`create database "${name}"`);
    try {
      await upgradeKeepsEveryKey((migrations) =>
        openDb(
          { VISION_MODE: 'distributed', DATABASE_URL: `${pgUrl}/${name}`, VISION_DATA_DIR: '' },
          { schema: 'tasks', migrations, logger: createLogger('claims-migration', { level: 'silent' }) },
        ),
      );
    } finally {
      await admin.raw(`drop database if exists "${name}" with (force)`);
      await admin.destroy();
    }
  }, 120_000);
});
