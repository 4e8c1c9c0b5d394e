import type { Migration } from '@vision/shared';

/** Schema of the images service: one row per image detection call (idempotency record and stored results). */
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
];
