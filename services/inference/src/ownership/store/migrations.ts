import type { Migration } from '@vision/shared';

/** The schema of the job-running replicas: every video job with its owner and checkpoint, and the live replicas. */
export const OWNERSHIP_SCHEMA = 'inference';

export const migrations: Migration[] = [
  {
    name: '001_job_ownership',
    async up(knex) {
      await knex.schema.createTable('replicas', (t) => {
        t.string('replica_id', 128).primary();
        t.string('url', 512).notNullable();
        t.integer('capacity').notNullable();
        t.boolean('draining').notNullable().defaultTo(false);
        t.timestamp('lease_until', { useTz: true }).notNullable();
      });
      await knex.schema.createTable('jobs', (t) => {
        t.string('job_id', 128).primary();
        t.jsonb('request').notNullable();
        t.string('status', 16).notNullable();
        t.string('reason', 1024).nullable();
        t.string('owner', 128).nullable();
        t.integer('epoch').notNullable().defaultTo(0);
        t.boolean('taken').notNullable().defaultTo(false);
        t.boolean('stop_requested').notNullable().defaultTo(false);
        t.jsonb('checkpoint').nullable();
        t.timestamp('given_at', { useTz: true }).notNullable();
        t.timestamp('started_at', { useTz: true }).notNullable();
        t.timestamp('ended_at', { useTz: true }).nullable();
        t.index(['status', 'owner']);
      });
    },
  },
  {
    // A live job's make-before-break handover: the replica it is offered to while its owner still runs it, and
    // whether that replica's stream is up (docs/ARCHITECTURE.md, "Who runs a video job").
    name: '002_job_successor',
    async up(knex) {
      await knex.schema.alterTable('jobs', (t) => {
        t.string('successor', 128).nullable();
        t.boolean('successor_ready').notNullable().defaultTo(false);
      });
    },
  },
];
