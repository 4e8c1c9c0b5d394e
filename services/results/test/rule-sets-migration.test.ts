/** Migration 004 on PGlite (the same check runs on Postgres in test/distributed). */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger, openDb } from '@vision/shared';
import { upgradeKeepsEveryAnalyticsRuleSet } from './rule-sets-upgrade';

jest.setTimeout(120_000);

test('rules held by analytics rows and their snapshots move into one set per task; the engine resumes', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'results-rule-sets-'));
  try {
    await upgradeKeepsEveryAnalyticsRuleSet((migrations) =>
      openDb(
        { VISION_MODE: 'standalone', DATABASE_URL: undefined, VISION_DATA_DIR: dir },
        { schema: 'results', migrations, logger: createLogger('rule-sets-migration', { level: 'silent' }) },
      ),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
