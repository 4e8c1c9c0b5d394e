import type { Migration } from '@vision/shared';
import { ruleSetsMigration } from './rule-sets-migration';

export const migrations: Migration[] = [
  {
    name: '001_tasks',
    async up(knex) {
      await knex.schema.createTable('tasks', (t) => {
        t.string('task_id', 64).primary();
        t.string('subject', 256).notNullable();
        t.string('kind', 16).notNullable(); // video | image
        t.string('source_type', 16).nullable(); // stream | file (video tasks)
        t.string('request_id', 64).notNullable();
        t.string('scene_code', 64).notNullable();
        t.string('status', 16).notNullable();
        t.string('reason', 256).nullable();
        t.double('business_threshold').notNullable();
        t.double('lower_bound').notNullable();
        t.text('stream_url').nullable(); // full URL (may carry credentials): only ever sent to the backend
        t.text('stream_url_redacted').nullable();
        t.string('object_key', 512).nullable();
        t.string('object_sha256', 64).nullable();
        t.bigInteger('object_size').nullable();
        t.jsonb('results_summary').nullable();
        t.boolean('stop_requested').notNullable().defaultTo(false);
        t.boolean('abandoned').notNullable().defaultTo(false);
        t.boolean('announced').notNullable().defaultTo(false);
        t.boolean('refund_pending').notNullable().defaultTo(false);
        t.timestamp('created_at', { useTz: true }).notNullable();
        t.timestamp('updated_at', { useTz: true }).notNullable();
        t.timestamp('result_expires_at', { useTz: true }).notNullable();
        t.timestamp('expired_at', { useTz: true }).nullable();
        t.index(['subject', 'created_at', 'task_id'], 'tasks_subject_created');
        t.index(['status'], 'tasks_status');
        t.index(['result_expires_at'], 'tasks_expires');
      });
      await knex.schema.createTable('idempotency_keys', (t) => {
        t.string('subject', 256).notNullable();
        t.string('idem_key', 64).notNullable();
        t.string('fingerprint', 64).notNullable();
        t.string('task_id', 64).notNullable();
        t.timestamp('created_at', { useTz: true }).notNullable();
        t.primary(['subject', 'idem_key']);
      });
      await knex.schema.createTable('subject_locks', (t) => {
        t.string('subject', 256).primary();
      });
      await knex.schema.createTable('outbox', (t) => {
        t.bigIncrements('id').primary();
        t.string('topic', 128).notNullable();
        t.string('msg_key', 128).notNullable();
        t.jsonb('value').notNullable();
        t.timestamp('created_at', { useTz: true }).notNullable();
        t.timestamp('published_at', { useTz: true }).nullable();
        t.index(['published_at', 'id'], 'outbox_pending');
      });
    },
    async down(knex) {
      for (const t of ['outbox', 'subject_locks', 'idempotency_keys', 'tasks'])
        await knex.schema.dropTableIfExists(t);
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
    // The shared outbox relay claims batches (FOR UPDATE SKIP LOCKED plus a claim lease), so that two
    // replicas never publish one row at the same time.
    name: '003_outbox_claim',
    async up(knex) {
      await knex.schema.alterTable('outbox', (t) => {
        t.timestamp('claimed_until', { useTz: true }).nullable();
      });
    },
    async down(knex) {
      await knex.schema.alterTable('outbox', (t) => {
        t.dropColumn('claimed_until');
      });
    },
  },
  {
    // File tasks waiting for an inference slot (domain/fair-share.ts): status submitting, charged, with
    // the instant they joined the queue (FIFO order). Kept here, not in the inference backend, so that
    // a queued task survives a restart of either service.
    name: '004_task_queue',
    async up(knex) {
      await knex.schema.alterTable('tasks', (t) => {
        t.timestamp('queued_at', { useTz: true }).nullable();
        t.index(['queued_at'], 'tasks_queued');
      });
    },
    async down(knex) {
      await knex.schema.alterTable('tasks', (t) => {
        t.dropIndex(['queued_at'], 'tasks_queued');
        t.dropColumn('queued_at');
      });
    },
  },
  {
    // The create's Idempotency-Key becomes a claim of the shared claim mechanism (packages/shared
    // idempotency/): running (no task yet) -> settling (task written, charge and submission under way)
    // -> completed, with the attempt and the lease its owner renews. Existing keys are completed, except
    // those whose task is still submitting outside the queue: settling with a lapsed lease, so that the
    // claim sweeper (crash recovery) finishes them.
    name: '005_idempotency_claims',
    async up(knex) {
      await knex.schema.alterTable('idempotency_keys', (t) => {
        t.string('state', 16).notNullable().defaultTo('completed');
        t.integer('attempt').notNullable().defaultTo(0);
        t.timestamp('lease_until', { useTz: true }).notNullable().defaultTo(knex.fn.now());
        t.index(['state', 'lease_until'], 'idempotency_keys_lease');
        t.index(['task_id'], 'idempotency_keys_task');
      });
      await knex('idempotency_keys')
        .whereIn(
          'task_id',
          knex('tasks').select('task_id').where({ status: 'submitting' }).whereNull('queued_at'),
        )
        .update({ state: 'settling', lease_until: knex.ref('created_at') });
    },
    async down(knex) {
      await knex.schema.alterTable('idempotency_keys', (t) => {
        t.dropIndex(['task_id'], 'idempotency_keys_task');
        t.dropIndex(['state', 'lease_until'], 'idempotency_keys_lease');
        t.dropColumn('lease_until');
        t.dropColumn('attempt');
        t.dropColumn('state');
      });
    },
  },
  {
    // A running task whose job the backend lost is started again (domain/lost-job.ts): how many times, and
    // when last, so that two replicas polling at once start it once.
    name: '006_job_restarts',
    async up(knex) {
      await knex.schema.alterTable('tasks', (t) => {
        t.integer('job_restarts').notNullable().defaultTo(0);
        t.timestamp('job_restarted_at', { useTz: true }).nullable();
      });
    },
    async down(knex) {
      await knex.schema.alterTable('tasks', (t) => {
        t.dropColumn('job_restarted_at');
        t.dropColumn('job_restarts');
      });
    },
  },
  {
    // Zones and lines of a video task (docs/ANALYTICS.md): the rules in force and their version on the task
    // (0: never had any), every version kept beside it.
    name: '007_task_rules',
    async up(knex) {
      await knex.schema.alterTable('tasks', (t) => {
        t.jsonb('rules').nullable();
        t.integer('rules_version').notNullable().defaultTo(0);
      });
      await knex.schema.createTable('task_rule_versions', (t) => {
        t.string('task_id', 64).notNullable();
        t.integer('version').notNullable();
        t.jsonb('rules').notNullable();
        t.timestamp('created_at', { useTz: true }).notNullable();
        t.primary(['task_id', 'version']);
      });
    },
    async down(knex) {
      await knex.schema.dropTableIfExists('task_rule_versions');
      await knex.schema.alterTable('tasks', (t) => {
        t.dropColumn('rules_version');
        t.dropColumn('rules');
      });
    },
  },
  ruleSetsMigration,
];
