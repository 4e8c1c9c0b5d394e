import type { Migration } from '@vision/shared';

/**
 * How far a task's evaluation has come, readable without its snapshot: `as_of_seq`, the seq of the last frame the
 * engine has seen (-1 before any), which each step writes beside the snapshot, with `as_of_rev`, the row's rev it
 * was written at (docs/ANALYTICS.md, "Through the service"). A read of results looks it up to serve frames only once
 * they are evaluated (docs/RESULTS.md). Where `as_of_rev` is not the row's rev (a row written before these columns,
 * or since by a release without them) the snapshot says it (analytics-store.ts, snapshotAsOfSeq).
 */
export const analyticsProgressMigration: Migration = {
  name: '008_analytics_as_of_seq',
  async up(knex) {
    await knex.raw('ALTER TABLE analytics_tasks ADD COLUMN as_of_seq integer, ADD COLUMN as_of_rev bigint');
  },
  async down(knex) {
    await knex.raw(
      'ALTER TABLE analytics_tasks DROP COLUMN IF EXISTS as_of_seq, DROP COLUMN IF EXISTS as_of_rev',
    );
  },
};
