import type { Migration } from '@vision/shared';

/**
 * The quota schema. `counters` holds one row per (subject, kind, day): the row every change of that
 * day locks first, so concurrent changes of one day are serialised. `used` counts charges and settled
 * holds; held units are summed from `holds` at read time (expired holds stop counting by themselves), less the
 * units a lease has spent already.
 */
export const migrations: Migration[] = [
  {
    name: '001_quota_ledger',
    async up(knex) {
      await knex.schema.createTable('counters', (t) => {
        t.string('subject', 200).notNullable();
        t.string('kind', 16).notNullable();
        t.string('day', 10).notNullable();
        t.integer('used').notNullable().defaultTo(0);
        t.primary(['subject', 'kind', 'day']);
      });
      await knex.schema.createTable('charges', (t) => {
        t.string('subject', 200).notNullable();
        t.string('charge_id', 128).notNullable();
        t.string('kind', 16).notNullable();
        t.integer('units').notNullable();
        t.string('day', 10).notNullable();
        t.string('status', 16).notNullable();
        t.timestamp('charged_at', { useTz: true }).notNullable();
        t.timestamp('refunded_at', { useTz: true }).nullable();
        t.primary(['subject', 'charge_id']);
      });
      await knex.schema.createTable('holds', (t) => {
        t.string('subject', 200).notNullable();
        t.string('hold_id', 128).notNullable();
        t.string('kind', 16).notNullable();
        t.integer('units').notNullable();
        t.string('day', 10).notNullable();
        t.string('status', 16).notNullable();
        t.timestamp('created_at', { useTz: true }).notNullable();
        t.timestamp('expires_at', { useTz: true }).notNullable();
        t.integer('settled_units').nullable();
        t.timestamp('settled_at', { useTz: true }).nullable();
        t.primary(['subject', 'hold_id']);
        t.index(['subject', 'kind', 'day', 'status'], 'holds_day_status_idx');
        t.index(['status', 'expires_at'], 'holds_status_expiry_idx');
      });
      await knex.schema.createTable('outbox', (t) => {
        t.bigIncrements('id').primary();
        t.string('topic', 100).notNullable();
        t.string('key', 200).notNullable();
        t.jsonb('payload').notNullable();
        t.timestamp('created_at', { useTz: true }).notNullable();
        t.timestamp('sent_at', { useTz: true }).nullable();
        t.timestamp('claimed_until', { useTz: true }).nullable();
        t.index(['sent_at', 'id'], 'outbox_unsent_idx');
      });
    },
    async down(knex) {
      for (const table of ['outbox', 'holds', 'charges', 'counters'])
        await knex.schema.dropTableIfExists(table);
    },
  },
  {
    // The W3C trace context (traceparent, tracestate) of the request that wrote an event, published as
    // the message's headers so that its consumers join that trace.
    name: '002_outbox_headers',
    async up(knex) {
      await knex.schema.alterTable('outbox', (t) => {
        t.text('headers').nullable();
      });
    },
    async down(knex) {
      await knex.schema.alterTable('outbox', (t) => {
        t.dropColumn('headers');
      });
    },
  },
  {
    // Leases are holds spent call by call: `spent_units` of their `units` are charged (one charge row per
    // call), the rest counts as held; `usable_until` is when their holder stops spending from them.
    name: '003_leases',
    async up(knex) {
      await knex.schema.alterTable('holds', (t) => {
        t.integer('spent_units').notNullable().defaultTo(0);
        t.timestamp('usable_until', { useTz: true }).nullable();
      });
    },
    async down(knex) {
      await knex.schema.alterTable('holds', (t) => {
        t.dropColumn('usable_until');
        t.dropColumn('spent_units');
      });
    },
  },
];
