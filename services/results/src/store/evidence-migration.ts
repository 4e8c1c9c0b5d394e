import type { Migration } from '@vision/shared';

/**
 * The evidence of places (docs/EVIDENCE.md): per event id, whether its picture is stored (the objects
 * under evidenceKeys) or why not; per track, the frame of its best picture. Written in the transaction of the
 * step that decided the events, after the pictures were put: a row never names a picture that is not stored.
 */
export const evidenceMigration: Migration = {
  name: '005_analytics_evidence',
  async up(knex) {
    await knex.raw(`
      CREATE TABLE analytics_snapshots (
        task_id text NOT NULL,
        event_id text NOT NULL,
        seq integer NOT NULL,
        frame_time_ms bigint,
        reason text,
        PRIMARY KEY (task_id, event_id)
      )`);
    await knex.raw(`
      CREATE TABLE analytics_best_shots (
        task_id text NOT NULL,
        track_id text NOT NULL,
        seq integer NOT NULL,
        frame_time_ms bigint NOT NULL,
        score double precision NOT NULL,
        PRIMARY KEY (task_id, track_id)
      )`);
  },
  async down(knex) {
    await knex.raw('DROP TABLE IF EXISTS analytics_best_shots');
    await knex.raw('DROP TABLE IF EXISTS analytics_snapshots');
  },
};
