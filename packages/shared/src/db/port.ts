import type { Knex } from 'knex';

/**
 * Database port: knex over pg (one Postgres schema per service) in distributed mode, knex over PGlite
 * (one PGlite data directory per service, persisted under VISION_DATA_DIR) in standalone mode. A
 * service never knows which one it has.
 */
export interface Migration {
  /** Unique, sortable name, e.g. `001_tasks`. */
  name: string;
  up(knex: Knex): Promise<void>;
  down?(knex: Knex): Promise<void>;
}

export interface Db {
  readonly kind: 'pg' | 'pglite';
  /** knex bound to the service's schema (search_path). */
  readonly knex: Knex;
  readonly schema: string;
  check(): Promise<void>;
  close(): Promise<void>;
}

export type { Knex };
