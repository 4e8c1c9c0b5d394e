import type { Migration } from '@vision/shared';

/**
 * Analytics of places (docs/ANALYTICS.md): per task, the rules in force and the engine's snapshot as of the
 * last evaluated frame (`rev` guards against two writers); its events, numbered `n` in the order they were
 * decided, each id once; and on each evaluated frame, its zone annotations.
 */
export const analyticsMigration: Migration = {
  name: '003_analytics',
  async up(knex) {
    await knex.raw(`
      CREATE TABLE analytics_tasks (
        task_id text PRIMARY KEY,
        rules_version integer NOT NULL,
        rules text NOT NULL,
        snapshot text,
        events_count bigint NOT NULL DEFAULT 0,
        rev bigint NOT NULL DEFAULT 0,
        updated_at timestamptz NOT NULL
      )`);
    await knex.raw(`
      CREATE TABLE analytics_events (
        task_id text NOT NULL,
        n bigint NOT NULL,
        event_id text NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (task_id, n),
        UNIQUE (task_id, event_id)
      )`);
    await knex.raw('ALTER TABLE result_frames ADD COLUMN zones jsonb');
  },
  async down(knex) {
    await knex.raw('ALTER TABLE result_frames DROP COLUMN IF EXISTS zones');
    await knex.raw('DROP TABLE IF EXISTS analytics_events');
    await knex.raw('DROP TABLE IF EXISTS analytics_tasks');
  },
};
