import type { Migration } from '@vision/shared';
import { analyticsMigration } from './analytics-migration';
import { analyticsProgressMigration } from './analytics-progress-migration';
import { bestShotRuleMigration } from './best-shot-rule-migration';
import { evidenceMigration } from './evidence-migration';
import { jobFencesMigration } from './job-fences-migration';
import { ruleSetsMigration } from './rule-sets-migration';
import { webhooksMigration } from './webhook-migration';

/**
 * result_frames is keyed (task_id, seq): a redelivered frame conflicts and is dropped, and a page is a
 * range scan of that primary key (`task_id = ? AND seq > ? ORDER BY seq LIMIT n`), never a scan of the
 * task's frames. result_tasks holds what results knows about each task (ownership, thresholds,
 * retention, status, the end marker) and a tombstone after its frames were purged.
 */
export const migrations: Migration[] = [
  {
    name: '001_results',
    async up(knex) {
      await knex.raw(`
        CREATE TABLE result_frames (
          task_id text NOT NULL,
          seq integer NOT NULL,
          frame_id text NOT NULL,
          frame_time_ms bigint NOT NULL,
          width integer NOT NULL,
          height integer NOT NULL,
          objects jsonb NOT NULL,
          PRIMARY KEY (task_id, seq)
        )`);
      await knex.raw(`
        CREATE TABLE result_tasks (
          task_id text PRIMARY KEY,
          subject text,
          kind text,
          scene_code text,
          status text,
          business_threshold double precision,
          lower_bound double precision,
          result_expires_at timestamptz,
          status_at timestamptz,
          meta_source text,
          end_frames integer,
          end_status text,
          first_frame_at timestamptz,
          purged_at timestamptz,
          updated_at timestamptz NOT NULL DEFAULT now()
        )`);
      await knex.raw(
        'CREATE INDEX result_tasks_expiry ON result_tasks (result_expires_at) WHERE purged_at IS NULL AND result_expires_at IS NOT NULL',
      );
      await knex.raw(
        'CREATE INDEX result_tasks_orphans ON result_tasks (first_frame_at) WHERE subject IS NULL AND purged_at IS NULL',
      );
      await knex.raw(
        'CREATE INDEX result_tasks_purged ON result_tasks (purged_at) WHERE purged_at IS NOT NULL',
      );
    },
    async down(knex) {
      await knex.raw('DROP TABLE IF EXISTS result_frames');
      await knex.raw('DROP TABLE IF EXISTS result_tasks');
    },
  },
  webhooksMigration,
  analyticsMigration,
  ruleSetsMigration,
  evidenceMigration,
  bestShotRuleMigration,
  jobFencesMigration,
  analyticsProgressMigration,
];
