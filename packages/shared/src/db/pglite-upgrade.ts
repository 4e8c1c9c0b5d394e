import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../config/config';
import type { Logger } from '../telemetry/logger';
import { createPGlite, type PGliteLike } from './pglite-loader';

/**
 * Standalone databases written by PGlite 0.3 (PostgreSQL 17) are copied into the PGlite this version
 * runs (0.5, PostgreSQL 18) the first time a service opens them: Postgres keeps no data-directory
 * compatibility between major versions (pglite.dev/docs/upgrade), and PGlite 0.5 refuses a 17 directory
 * without touching it. The old release is kept under the npm alias `pglite-pg17` for this copy only.
 *
 * The copy: the old directory is opened with the old PGlite; a new one is created beside it
 * (`<dir>.upgrading`) with the migrations the old one had applied (`createSchema`), then every table of
 * the service's schema is copied with COPY (CSV through PGlite's /dev/blob) and every sequence set to the
 * old value. Only then is the new directory put in place (`<dir>.upgraded`, then `<dir>`) and the old one
 * kept as `<dir>.pg17`. A copy interrupted before that leaves `<dir>` as it was and is redone from the
 * start; one interrupted between the renames is finished at the next start.
 */

/** The PostgreSQL major version of the PGlite this version runs. */
export const PG_MAJOR = '18';
const LEGACY = { major: '17', module: 'pglite-pg17' } as const;

/** The major version a Postgres data directory was written by (its PG_VERSION file); undefined when there is none. */
export function dataDirMajor(dir: string): string | undefined {
  try {
    return readFileSync(path.join(dir, 'PG_VERSION'), 'utf8').trim();
  } catch {
    return undefined;
  }
}

export interface UpgradeOptions {
  schema: string;
  logger?: Logger;
  /** Creates the service's schema on a new database with these migrations (names) applied, as openDb does. */
  createSchema(pglite: PGliteLike, migrationNames: string[]): Promise<{ close(): Promise<void> }>;
}

/** PGliteLike with the result shape of PGlite's `query`. */
interface Queryable {
  query<T>(sql: string, params?: unknown[], options?: object): Promise<{ rows: T[]; blob?: Blob }>;
  close(): Promise<void>;
}
const queryable = (pg: PGliteLike) => pg as unknown as Queryable;

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Brings `dir` to PG_MAJOR when an earlier PGlite wrote it (see above); nothing when it is new or current. */
export async function upgradeStandaloneDb(dir: string, opts: UpgradeOptions): Promise<void> {
  const staged = `${dir}.upgraded`;
  if (existsSync(staged)) {
    // The copy was complete; the renames were interrupted.
    if (existsSync(dir)) renameSync(dir, backupName(dir));
    renameSync(staged, dir);
  }
  const major = dataDirMajor(dir);
  if (major === undefined || major === PG_MAJOR) return;
  if (major !== LEGACY.major)
    throw new ConfigError([
      `the standalone database of ${opts.schema} (VISION_DATA_DIR/pg/${opts.schema}) was written by PostgreSQL ` +
        `${major}; this version reads ${PG_MAJOR} and upgrades ${LEGACY.major}: move it aside to start afresh`,
    ]);
  const work = `${dir}.upgrading`;
  rmSync(work, { recursive: true, force: true });
  opts.logger?.info({ schema: opts.schema }, `upgrading the standalone database from PostgreSQL ${major}`);
  const old = queryable(createPGlite(dir, LEGACY.module));
  try {
    const table = `${ident(opts.schema)}.knex_migrations`;
    const present = await old.query<{ ok: boolean }>(`select to_regclass($1) is not null as ok`, [table]);
    const applied = present.rows[0].ok
      ? await old.query<{ name: string }>(`select name from ${table} order by id`)
      : { rows: [] };
    const pglite = createPGlite(work);
    let created: { close(): Promise<void> } | undefined;
    try {
      created = await opts.createSchema(
        pglite,
        applied.rows.map((r) => r.name),
      );
      const rows = await copyRows(old, queryable(pglite), opts.schema);
      opts.logger?.info({ schema: opts.schema, rows }, 'standalone database copied');
      await created.close();
    } catch (err) {
      await (created ?? pglite).close().catch(() => undefined);
      rmSync(work, { recursive: true, force: true });
      throw err;
    }
  } finally {
    await old.close();
  }
  renameSync(work, staged);
  const backup = backupName(dir);
  renameSync(dir, backup);
  renameSync(staged, dir);
  opts.logger?.info(
    { schema: opts.schema },
    `standalone database upgraded to PostgreSQL ${PG_MAJOR}; the old one is kept beside it (${backup.slice(dir.length)})`,
  );
}

function backupName(dir: string): string {
  const plain = `${dir}.pg${LEGACY.major}`;
  return existsSync(plain) ? `${plain}-${Date.now()}` : plain;
}

/** Copies every table's rows and every sequence's position of `schema`; returns the rows copied. */
export async function copySchema(from: PGliteLike, to: PGliteLike, schema: string): Promise<number> {
  return copyRows(queryable(from), queryable(to), schema);
}

async function copyRows(from: Queryable, to: Queryable, schema: string): Promise<number> {
  const s = ident(schema);
  const tables = await from.query<{ table_name: string }>(
    `select table_name from information_schema.tables
      where table_schema = $1 and table_type = 'BASE TABLE' and table_name <> 'knex_migrations_lock'
      order by table_name`,
    [schema],
  );
  let rows = 0;
  for (const { table_name: name } of tables.rows) {
    const cols = await from.query<{ column_name: string }>(
      `select column_name from information_schema.columns
        where table_schema = $1 and table_name = $2 order by ordinal_position`,
      [schema, name],
    );
    const target = `${s}.${ident(name)} (${cols.rows.map((c) => ident(c.column_name)).join(', ')})`;
    // The new database's migrations table lists what createSchema ran: the old one's rows replace it.
    if (name === 'knex_migrations') await to.query(`delete from ${s}.knex_migrations`);
    const count = async (db: Queryable) =>
      (await db.query<{ n: number }>(`select count(*)::int as n from ${s}.${ident(name)}`)).rows[0].n;
    const n = await count(from);
    if (n === 0) continue; // PGlite hands out no blob for an empty COPY
    const out = await from.query(`copy ${target} to '/dev/blob' with (format csv)`);
    if (!out.blob) throw new Error(`copying ${schema}.${name}: no data came out`);
    await to.query(`copy ${target} from '/dev/blob' with (format csv)`, [], { blob: out.blob });
    if ((await count(to)) !== n) throw new Error(`copying ${schema}.${name}: ${n} rows in, not as many out`);
    rows += n;
  }
  const sequences = await from.query<{ sequence_name: string }>(
    `select sequence_name from information_schema.sequences where sequence_schema = $1`,
    [schema],
  );
  for (const { sequence_name: seq } of sequences.rows) {
    const at = await from.query<{ last_value: string; is_called: boolean }>(
      `select last_value, is_called from ${s}.${ident(seq)}`,
    );
    await to.query(`select setval($1, $2, $3)`, [
      `${s}.${ident(seq)}`,
      at.rows[0].last_value,
      at.rows[0].is_called,
    ]);
  }
  return rows;
}
