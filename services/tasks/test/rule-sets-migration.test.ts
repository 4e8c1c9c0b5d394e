/** Migration 008 on PGlite (the same check runs on Postgres in test/distributed). */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger, openDb } from '@vision/shared';
import { upgradeKeepsEveryRuleSet } from './rule-sets-upgrade';

jest.setTimeout(120_000);

test('rules stored by the earlier release move into one set per content; the task reads and changes as before', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tasks-rule-sets-'));
  try {
    await upgradeKeepsEveryRuleSet((migrations) =>
      openDb(
        { VISION_MODE: 'standalone', DATABASE_URL: undefined, VISION_DATA_DIR: dir },
        { schema: 'tasks', migrations, logger: createLogger('rule-sets-migration', { level: 'silent' }) },
      ),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
