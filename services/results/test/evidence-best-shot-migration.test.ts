/**
 * Migration 006 on PGlite: the best shots kept before it (the 1 % rule, every row with its picture) read as
 * stored pictures that met the size rule; a fallback never replaces them, a better score under the same rule does,
 * and a failed picture only replaces a row without one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger, openDb, type Migration } from '@vision/shared';
import { EvidenceStore, type BestShotRow } from '../src/store/evidence-store';
import { migrations } from '../src/store/migrations';

jest.setTimeout(120_000);

const row = (over: Partial<BestShotRow>): BestShotRow => ({
  trackId: '7',
  seq: 1,
  frameTimeMs: 200,
  score: 0.5,
  rule: 'met',
  reason: null,
  ...over,
});

test('kept best shots read as stored pictures that met the size rule; the upsert keeps the better one', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'results-best-shot-migration-'));
  const open = (m: Migration[]) =>
    openDb(
      { VISION_MODE: 'standalone', DATABASE_URL: undefined, VISION_DATA_DIR: dir },
      { schema: 'results', migrations: m, logger: createLogger('best-shot-migration', { level: 'silent' }) },
    );
  try {
    const old = await open(migrations.filter((m) => m.name < '006'));
    try {
      await old
        .knex('analytics_best_shots')
        .insert({ task_id: 't', track_id: '7', seq: 3, frame_time_ms: 600, score: 0.8 });
    } finally {
      await old.close();
    }
    const db = await open(migrations);
    try {
      const store = new EvidenceStore(db.knex);
      expect(await store.bestShot('t', '7')).toEqual(row({ seq: 3, frameTimeMs: 600, score: 0.8 }));
      const write = (b: BestShotRow) => db.knex.transaction((trx) => store.write(trx, 't', [], [b]));
      // A fallback or a failure never replaces a stored picture that met the rule, whatever their scores.
      await write(row({ seq: 4, score: 0.99, rule: 'too_small' }));
      await write(row({ seq: 5, score: 0.99, reason: 'frame_gone' }));
      expect((await store.bestShot('t', '7'))?.seq).toBe(3);
      // A higher score under the same rule does (the step asked for its gain).
      await write(row({ seq: 6, score: 0.9 }));
      expect((await store.bestShot('t', '7'))?.seq).toBe(6);

      // A track without a picture: its failure is kept, replaced by the next failure or by any picture.
      await write(row({ trackId: '8', seq: 1, score: 0.9, rule: 'met', reason: 'capture_failed' }));
      await write(row({ trackId: '8', seq: 2, score: 0.2, rule: 'at_edge', reason: 'frame_gone' }));
      expect(await store.bestShot('t', '8')).toMatchObject({ seq: 2, reason: 'frame_gone' });
      await write(row({ trackId: '8', seq: 3, score: 0.1, rule: 'at_edge' }));
      expect(await store.bestShot('t', '8')).toMatchObject({ seq: 3, rule: 'at_edge', reason: null });
      // Then a better rule replaces it, whatever its score.
      await write(row({ trackId: '8', seq: 4, score: 0.05, rule: 'too_small' }));
      expect(await store.bestShot('t', '8')).toMatchObject({ seq: 4, rule: 'too_small' });
    } finally {
      await db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
