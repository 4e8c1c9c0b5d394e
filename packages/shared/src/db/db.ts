import { existsSync, renameSync } from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import { ConfigError, type CommonConfig } from '../config/config';
import type { Logger } from '../telemetry/logger';
import type { Db, Migration } from './port';
import { mayCreateSchemas, verifyMigrated } from './db-logins';
import { waitForDatabase } from './db-wait';
import { createPGlite, type PGliteLike } from './pglite-loader';
import { SHARED_DB_NAME, sharedPGliteKnex } from './pglite-shared';
import { copySchema, upgradeStandaloneDb } from './pglite-upgrade';

export interface OpenDbOptions {
  /** Postgres schema of the service, e.g. `tasks`: lower-case letters, digits and underscores. */
  schema: string;
  migrations: Migration[];
  logger?: Logger;
  /**
   * Standalone only: keep the database in memory (nothing on disk, gone on close). Also chosen when
   * VISION_DATA_DIR is `:memory:`. Meant for tests.
   */
  memory?: boolean;
  /** Distributed only: how long to wait for Postgres to accept a connection at open (db-wait.ts); DB_START_WAIT_MS. */
  connectWaitMs?: number;
}

const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/;

/** Name of the migrations table inside each service's own schema. */
export const MIGRATIONS_TABLE = 'knex_migrations';

class ListMigrationSource implements Knex.MigrationSource<Migration> {
  constructor(private readonly migrations: Migration[]) {}
  async getMigrations(): Promise<Migration[]> {
    return [...this.migrations].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
  getMigrationName(m: Migration): string {
    return m.name;
  }
  async getMigration(m: Migration): Promise<Knex.Migration> {
    return { up: (k) => m.up(k), down: (k) => (m.down ? m.down(k) : Promise.resolve()) };
  }
}

/** The PGlite data directory of one service in standalone mode, as earlier versions laid it out (merged on open). */
export function pgliteDataDir(dataDir: string, schema: string): string {
  return path.resolve(dataDir, 'pg', schema);
}

/** The one PGlite data directory of every service's schema in standalone mode (pglite-shared.ts). */
export function sharedPgliteDataDir(dataDir: string): string {
  return path.resolve(dataDir, 'pg', SHARED_DB_NAME);
}

function isRetryableSetupError(err: unknown): boolean {
  const e = err as { code?: unknown; name?: unknown; message?: unknown };
  // Another replica is migrating (lock held), or created the schema/table at the same moment.
  return (
    e?.name === 'MigrationLocked' ||
    e?.code === '23505' ||
    e?.code === '42P06' ||
    e?.code === '42P07' ||
    (typeof e?.message === 'string' && /already locked/i.test(e.message))
  );
}

async function prepare(knex: Knex, schema: string, migrations: Migration[], logger?: Logger): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await knex.raw('create schema if not exists ??', [schema]);
      const [, done] = (await knex.migrate.latest({
        migrationSource: new ListMigrationSource(migrations),
        schemaName: schema,
        tableName: MIGRATIONS_TABLE,
        // Migrations expand, and a release runs on its successor's schema (a rollout's old pods beside its new ones,
        // `helm rollback`): migrations recorded that this version does not know are a newer version's, kept.
        disableMigrationsListValidation: true,
      })) as [number, string[]];
      if (done.length > 0) logger?.info({ schema, migrations: done }, 'database migrations applied');
      return;
    } catch (err) {
      if (attempt >= 30 || !isRetryableSetupError(err)) throw err;
      logger?.info({ schema, attempt }, 'schema setup busy in another process; retrying');
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** knex over one PGlite instance (which knex-pglite would otherwise construct itself); destroy() closes it. */
function pgliteKnex(pglite: PGliteLike, schema: string): Knex {
  return knexFactory({
    client: ClientPgLite,
    dialect: 'postgres',
    connection: () => ({ pglite }),
    searchPath: [schema],
    acquireConnectionTimeout: 30_000,
  } as Knex.Config);
}

/** A new PGlite database of an upgrade (pglite-upgrade.ts) with the schema the old one had: these migrations. */
async function createSchemaFor(
  pglite: PGliteLike,
  names: string[],
  opts: OpenDbOptions,
): Promise<{ close(): Promise<void> }> {
  const unknown = names.filter((n) => !opts.migrations.some((m) => m.name === n));
  if (unknown.length > 0)
    throw new ConfigError([
      `the standalone database of ${opts.schema} has migrations this version does not know (${unknown.join(', ')})`,
    ]);
  const knex = pgliteKnex(pglite, opts.schema);
  try {
    await prepare(
      knex,
      opts.schema,
      opts.migrations.filter((m) => names.includes(m.name)),
      opts.logger,
    );
  } catch (err) {
    await knex.destroy().catch(() => undefined);
    throw err;
  }
  return { close: () => knex.destroy() };
}

/**
 * Opens the service's database and brings its schema up to date.
 *
 * - distributed: knex over `pg` at DATABASE_URL; the service's tables live in their own schema,
 *   which is the connection's search_path. A server not reachable yet (down, starting, loaded, out of
 *   connection slots) is waited for, up to DB_START_WAIT_MS (db-wait.ts). A login that may create schemas
 *   in the database (the owner's, or one login for every service) creates and migrates it; a service's own
 *   login (db-logins.ts) may not, and only checks that the owner has applied every migration
 *   (scripts/migrate.js).
 * - standalone: knex over PGlite (WASM Postgres): one database for every service at
 *   `${VISION_DATA_DIR}/pg/vision`, the service's tables in its own schema (pglite-shared.ts); a
 *   service's database of the earlier layout, `${VISION_DATA_DIR}/pg/<schema>`, is merged into it first
 *   (mergeLegacyDb); or in memory when `memory` is set or VISION_DATA_DIR is `:memory:`. PGlite has exactly one
 *   connection: inside `knex.transaction(...)` use the trx for every query, since a query on the plain
 *   knex waits for the connection the transaction holds.
 *
 * Migrations run through knex's migrator with a migration table in the service's schema, so each
 * service's migrations are independent of the others'.
 */
export async function openDb(
  cfg: Pick<CommonConfig, 'VISION_MODE' | 'DATABASE_URL' | 'VISION_DATA_DIR'>,
  opts: OpenDbOptions,
): Promise<Db> {
  const { schema } = opts;
  if (!SCHEMA_RE.test(schema)) throw new Error(`invalid schema name ${JSON.stringify(schema)}`);
  let knex: Knex;
  let kind: Db['kind'];
  if (cfg.VISION_MODE === 'distributed') {
    if (!cfg.DATABASE_URL) throw new ConfigError(['DATABASE_URL: required in distributed mode (not set)']);
    kind = 'pg';
    knex = knexFactory({
      client: 'pg',
      connection: cfg.DATABASE_URL,
      searchPath: [schema],
      pool: { min: 0, max: 10 },
      acquireConnectionTimeout: 10_000,
    });
  } else {
    kind = 'pglite';
    const memory = opts.memory === true || cfg.VISION_DATA_DIR === ':memory:';
    if (memory) {
      knex = pgliteKnex(createPGlite(undefined), schema);
    } else {
      knex = sharedPGliteKnex(sharedPgliteDataDir(cfg.VISION_DATA_DIR), schema);
      const legacy = pgliteDataDir(cfg.VISION_DATA_DIR, schema);
      if (existsSync(legacy)) {
        try {
          await mergeLegacyDb(knex, legacy, opts);
        } catch (err) {
          await knex.destroy().catch(() => undefined);
          throw err;
        }
      }
    }
  }
  try {
    if (kind === 'pg') await waitForDatabase(knex, { logger: opts.logger, budgetMs: opts.connectWaitMs });
    if (kind === 'pg' && !(await mayCreateSchemas(knex)))
      await verifyMigrated(knex, schema, opts.migrations, MIGRATIONS_TABLE);
    else await prepare(knex, schema, opts.migrations, opts.logger);
  } catch (err) {
    await knex.destroy().catch(() => undefined);
    throw err;
  }
  return {
    kind,
    knex,
    schema,
    check: async () => {
      await knex.raw('select 1');
    },
    close: () => knex.destroy(),
  };
}

/**
 * Moves a service's database of the earlier standalone layout (`pg/<schema>`, one PGlite per service) into
 * the shared one: brought to the current PGlite first (pglite-upgrade.ts), then its schema created with the
 * migrations it had, every table and sequence copied, and the old directory renamed `<schema>.merged`, which
 * is the step that makes the merge count. A merge interrupted before it is redone from the start: the schema
 * is dropped from the shared database first.
 */
async function mergeLegacyDb(knex: Knex, legacy: string, opts: OpenDbOptions): Promise<void> {
  const { schema } = opts;
  await upgradeStandaloneDb(legacy, {
    schema,
    logger: opts.logger,
    createSchema: (pglite, names) => createSchemaFor(pglite, names, opts),
  });
  opts.logger?.info({ schema }, 'moving the standalone database into the shared one');
  const old = createPGlite(legacy);
  try {
    await old.waitReady;
    const table = `"${schema}".${MIGRATIONS_TABLE}`;
    const present = (await old.query('select to_regclass($1) is not null as ok', [table])) as {
      rows: { ok: boolean }[];
    };
    const applied = present.rows[0]?.ok
      ? ((await old.query(`select name from ${table} order by id`)) as { rows: { name: string }[] }).rows
      : [];
    const names = applied.map((r) => r.name);
    const unknown = names.filter((n) => !opts.migrations.some((m) => m.name === n));
    if (unknown.length > 0)
      throw new ConfigError([
        `the standalone database of ${schema} has migrations this version does not know (${unknown.join(', ')})`,
      ]);
    await knex.raw('drop schema if exists ?? cascade', [schema]);
    await prepare(
      knex,
      schema,
      opts.migrations.filter((m) => names.includes(m.name)),
      opts.logger,
    );
    // The copy runs on the shared connection while this service holds it (no other statement interleaves).
    const client = knex.client as {
      acquireConnection(): Promise<PGliteLike>;
      releaseConnection(c: PGliteLike): Promise<void>;
    };
    const shared = await client.acquireConnection();
    try {
      const rows = await copySchema(old, shared, schema);
      opts.logger?.info({ schema, rows }, 'standalone database moved into the shared one');
    } finally {
      await client.releaseConnection(shared);
    }
  } finally {
    await old.close();
  }
  renameSync(legacy, `${legacy}.merged`);
}
