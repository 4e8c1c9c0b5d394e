import type { Migration } from '@vision/shared';

/**
 * Schema of the images service: one row per image detection call (idempotency record and stored results),
 * and the outbox of its `vision.image-calls` records (the shared OutboxRelay publishes it).
 */
export const migrations: Migration[] = [
  {
    name: '001_image_calls',
    async up(knex) {
      await knex.schema.createTable('image_calls', (t) => {
        t.text('subject').notNullable();
        t.text('idempotency_key').notNullable();
        t.text('task_id').notNullable().unique();
        t.text('fingerprint').notNullable();
        t.text('scene_code').notNullable();
        /** running -> settling (results stored, quota being settled) -> completed. */
        t.text('state').notNullable();
        /** 0 for the first run; incremented by each take-over of a call whose owner died. */
        t.integer('attempt').notNullable().defaultTo(0);
        t.timestamp('lease_until', { useTz: true }).notNullable();
        t.integer('image_count').notNullable();
        t.jsonb('results');
        t.integer('units');
        t.timestamp('created_at', { useTz: true }).notNullable();
        t.timestamp('completed_at', { useTz: true });
        t.primary(['subject', 'idempotency_key']);
        t.index(['created_at']);
        t.index(['state', 'lease_until']);
      });
    },
    async down(knex) {
      await knex.schema.dropTableIfExists('image_calls');
    },
  },
  {
    // The call's task record leaves through the outbox, written by the statement that stores the
    // results; recorded_at and record_updated_at are the record's created_at and updated_at.
    name: '002_image_calls_outbox',
    async up(knex) {
      await knex.schema.alterTable('image_calls', (t) => {
        t.timestamp('recorded_at', { useTz: true });
        t.timestamp('record_updated_at', { useTz: true });
      });
      await knex.schema.createTable('outbox', (t) => {
        t.bigIncrements('id').primary();
        t.string('topic', 100).notNullable();
        t.string('key', 200).notNullable();
        t.jsonb('payload').notNullable();
        t.text('headers');
        t.timestamp('created_at', { useTz: true }).notNullable();
        t.timestamp('sent_at', { useTz: true });
        t.timestamp('claimed_until', { useTz: true });
        t.index(['sent_at', 'id'], 'outbox_unsent_idx');
      });
    },
    async down(knex) {
      await knex.schema.dropTableIfExists('outbox');
      await knex.schema.alterTable('image_calls', (t) => {
        t.dropColumn('recorded_at');
        t.dropColumn('record_updated_at');
      });
    },
  },
  {
    // The quota lease a call's units are charged to (null: a call settled by a quota hold).
    name: '003_image_calls_lease',
    async up(knex) {
      await knex.schema.alterTable('image_calls', (t) => {
        t.text('lease_id');
      });
    },
    async down(knex) {
      await knex.schema.alterTable('image_calls', (t) => {
        t.dropColumn('lease_id');
      });
    },
  },
];
