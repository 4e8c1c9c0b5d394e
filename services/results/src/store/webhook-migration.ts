import type { Migration } from '@vision/shared';

/**
 * Webhook endpoints, their deliveries (one per endpoint and event: the outbox the dispatchers lease from)
 * and the attempts of each delivery (the delivery log). `seq` orders deliveries: one endpoint's deliveries
 * with the same `order_key` (a task) are sent one after the other. Frame marks remember, per task, the last
 * frame announced by `vision.task.frames_available` and when.
 */
export const webhooksMigration: Migration = {
  name: '002_webhooks',
  async up(knex) {
    await knex.raw(`
      CREATE TABLE webhook_endpoints (
        endpoint_id text PRIMARY KEY,
        subject text NOT NULL,
        url text NOT NULL,
        event_types jsonb NOT NULL,
        description text,
        secret_sealed text NOT NULL,
        previous_secret_sealed text,
        previous_secret_until timestamptz,
        enabled boolean NOT NULL DEFAULT true,
        disabled_reason text,
        disabled_at timestamptz,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await knex.raw('CREATE INDEX webhook_endpoints_subject ON webhook_endpoints (subject, created_at)');
    await knex.raw(`
      CREATE TABLE webhook_deliveries (
        seq bigserial NOT NULL UNIQUE,
        endpoint_id text NOT NULL REFERENCES webhook_endpoints (endpoint_id) ON DELETE CASCADE,
        delivery_id text NOT NULL,
        event_type text NOT NULL,
        order_key text NOT NULL,
        body text NOT NULL,
        trace_headers jsonb,
        status text NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        round_start_attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        lease_until timestamptz,
        give_up_at timestamptz NOT NULL,
        last_status_code integer,
        last_outcome text,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        delivered_at timestamptz,
        dead_at timestamptz,
        PRIMARY KEY (endpoint_id, delivery_id)
      )`);
    await knex.raw(
      `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await knex.raw(
      `CREATE INDEX webhook_deliveries_order ON webhook_deliveries (endpoint_id, order_key, seq) WHERE status = 'pending'`,
    );
    await knex.raw('CREATE INDEX webhook_deliveries_log ON webhook_deliveries (endpoint_id, seq)');
    await knex.raw(
      `CREATE INDEX webhook_deliveries_ended ON webhook_deliveries (updated_at) WHERE status <> 'pending'`,
    );
    await knex.raw(`
      CREATE TABLE webhook_attempts (
        endpoint_id text NOT NULL,
        delivery_id text NOT NULL,
        attempt integer NOT NULL,
        started_at timestamptz NOT NULL,
        duration_ms integer NOT NULL,
        status_code integer,
        outcome text NOT NULL,
        PRIMARY KEY (endpoint_id, delivery_id, attempt),
        FOREIGN KEY (endpoint_id, delivery_id) REFERENCES webhook_deliveries (endpoint_id, delivery_id) ON DELETE CASCADE
      )`);
    await knex.raw(`
      CREATE TABLE webhook_frame_marks (
        task_id text PRIMARY KEY,
        last_seq integer NOT NULL,
        emitted_at timestamptz NOT NULL
      )`);
  },
  async down(knex) {
    for (const t of ['webhook_attempts', 'webhook_deliveries', 'webhook_endpoints', 'webhook_frame_marks'])
      await knex.raw(`DROP TABLE IF EXISTS ${t}`);
  },
};
