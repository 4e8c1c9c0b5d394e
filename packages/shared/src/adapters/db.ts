import { mkdirSync } from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import { ConfigError, type CommonConfig } from '../config';
import type { Logger } from '../logger';
import type { Db, Migration } from '../ports/db';
import { createPGlite, type PGliteLike } from './pglite-loader';
import { upgradeStandaloneDb } from './pglite-upgrade';

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

/** The PGlite data directory of one service in standalone mode. */
export function pgliteDataDir(dataDir: string, schema: string): string {
  return path.resolve(dataDir, 'pg', schema);
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
 * - distributed: knex over `pg` at DATABASE_URL; the service's tables live in their own schema
 *   (created when missing), which is the connection's search_path.
 * - standalone: knex over PGlite (WASM Postgres) with its own data directory
 *   `${VISION_DATA_DIR}/pg/<schema>` (copied first when an earlier PGlite wrote it, pglite-upgrade.ts);
 *   or in memory when `memory` is set or VISION_DATA_DIR is `:memory:`. PGlite has exactly one
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
    let dir: string | undefined;
    if (!memory) {
      dir = pgliteDataDir(cfg.VISION_DATA_DIR, schema);
      mkdirSync(path.dirname(dir), { recursive: true });
      // A directory an earlier PGlite wrote (PostgreSQL 17) is copied into this one's first.
      await upgradeStandaloneDb(dir, {
        schema,
        logger: opts.logger,
        createSchema: (pglite, names) => createSchemaFor(pglite, names, opts),
      });
    }
    knex = pgliteKnex(createPGlite(dir), schema);
  }
  try {
    await prepare(knex, schema, opts.migrations, opts.logger);
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
