/** Migration 004 on PGlite over analytics whose rows and snapshots hold their rules (001-003). */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger, type Migration, openDb, parseRules, rulesDigest } from '@vision/shared';
import { AnalyticsEngine } from '../src/domain/analytics';
import { AnalyticsStore } from '../src/store/analytics-store';
import { migrations } from '../src/store/migrations';
import { engineOf } from '../src/use-cases/run-analytics';

jest.setTimeout(120_000);

test('rules held by analytics rows and their snapshots move into one set per task; the engine resumes', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'results-rule-sets-'));
  const open = (m: Migration[]) =>
    openDb(
      { VISION_MODE: 'standalone', DATABASE_URL: undefined, VISION_DATA_DIR: dir },
      { schema: 'results', migrations: m, logger: createLogger('rule-sets-migration', { level: 'silent' }) },
    );
  const parsed = parseRules({ lines: [{ id: 'gate', start: [0.1, 0.5], end: [0.9, 0.5] }] });
  if (!parsed.ok) throw new Error(parsed.error.message);
  const rules = parsed.rules;
  const engine = AnalyticsEngine.create('old-task', rules, 2);
  engine.processFrame({ seq: 0, time_ms: 0, width: 640, height: 480, objects: [] });
  // What the earlier release wrote: the rules on the row, and again inside the snapshot.
  const oldSnapshot = { ...engine.snapshot(), rules };
  try {
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
      const store = new AnalyticsStore(db.knex);
      const rec = await store.get('old-task');
      expect(rec).toMatchObject({ rulesVersion: 2, rulesDigest: rulesDigest(rules), rules, rev: 7 });
      const resumed = engineOf(rec!);
      expect(resumed.lastSeq).toBe(0);
      expect(resumed.analytics()).toEqual(engine.analytics());
    } finally {
      await db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
