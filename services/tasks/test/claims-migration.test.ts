/** Migration 005 on PGlite over a database that 001-004 filled (the same check runs on Postgres in test/distributed). */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger, openDb } from '@vision/shared';
import { upgradeKeepsEveryKey } from './claims-upgrade';

jest.setTimeout(120_000);

test('on PGlite, existing keys become claims; a task still submitting becomes a lapsed settling claim', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tasks-claims-'));
  const logger = createLogger('claims-migration', { level: 'silent' });
  try {
    await upgradeKeepsEveryKey((migrations) =>
      openDb(
        { VISION_MODE: 'standalone', DATABASE_URL: undefined, VISION_DATA_DIR: dir },
        { schema: 'tasks', migrations, logger },
      ),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
