import type { Migration } from '@vision/shared';

/**
 * The fence of each video task's job (docs/INTERNAL.md, "vision.frames"): the highest epoch a job-running replica
 * has taken it at, as its messages said. A message of a lower epoch comes from a replica that lost the job, and is
 * dropped.
 */
export const jobFencesMigration: Migration = {
  name: '007_job_fences',
  async up(knex) {
    await knex.raw(`
      CREATE TABLE job_fences (
        task_id text PRIMARY KEY,
        epoch integer NOT NULL,
        refused bigint NOT NULL DEFAULT 0
      )`);
  },
  async down(knex) {
    await knex.raw('DROP TABLE IF EXISTS job_fences');
  },
};
