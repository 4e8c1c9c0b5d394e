import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import { createPGlite, type PGliteLike } from './pglite-loader';

/**
 * Standalone: every service's schema lives in one PGlite database, `${VISION_DATA_DIR}/pg/vision`, as the
 * distributed mode has one Postgres database with a schema per service. Each PGlite holds its own Postgres
 * in WebAssembly memory (about 200 MB resident each), so one database in place of five is most of the
 * standalone process's memory.
 *
 * PGlite has one connection. The services share it through one lock: a service's knex takes it for each query,
 * or for a whole transaction, and sets the connection's search_path to its own schema when another service
 * used it last. So a service sees only its own schema, as in the distributed mode, and one service's
 * transaction never interleaves with another's statements. A transaction therefore must not wait on another
 * service (none does: every transaction body is statements on its own store); a wait for the lock longer than
 * the acquire timeout is an error, not a hang.
 *
 * A new database is initialised in a short-lived child process: Postgres' initdb runs in a WebAssembly
 * instance of its own whose memory the process would otherwise keep (about 400 MB).
 */
export const SHARED_DB_NAME = 'vision';

interface SharedPGlite {
  pglite: PGliteLike;
  refs: number;
  /** The schema of the connection's search_path now. */
  searchPath?: string;
  /** Resolves when the lock is free; each holder chains its release onto it. */
  tail: Promise<void>;
  /** Acquirers waiting for the lock now. */
  waiting: number;
}

const open = new Map<string, SharedPGlite>();

/**
 * Creates the database files of `dir` in a child process, when there are none: Postgres' initdb, or, when
 * VISION_PGLITE_TEMPLATE names a tarball of a fresh data directory (pglite-loader.ts), that tarball unpacked
 * (about 1 s of CPU in place of 7-9 s on 2 cores).
 */
function initialise(dir: string): void {
  if (existsSync(path.join(dir, 'PG_VERSION'))) return;
  mkdirSync(path.dirname(dir), { recursive: true });
  const script =
    'const { PGlite } = require(process.argv[1]);' +
    'const template = process.argv[3];' +
    'const options = template ? { loadDataDir: new Blob([require("node:fs").readFileSync(template)]) } : undefined;' +
    'const db = new PGlite(process.argv[2], options);' +
    'db.waitReady.then(() => db.close()).catch((e) => { console.error(e); process.exit(1); });';
  const template = process.env.VISION_PGLITE_TEMPLATE ?? '';
  execFileSync(process.execPath, ['-e', script, require.resolve('@electric-sql/pglite'), dir, template], {
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 120_000,
  });
}

/** Takes the lock of `db`; resolves to its release, or rejects after `timeoutMs`. */
function lock(db: SharedPGlite, timeoutMs: number): Promise<() => void> {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const before = db.tail;
  db.tail = before.then(() => held);
  db.waiting++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      db.waiting--;
      // Our turn still comes: pass it straight on.
      void before.then(release);
      reject(new Error(`the standalone database was busy for ${timeoutMs} ms`));
    }, timeoutMs);
    void before.then(() => {
      clearTimeout(timer);
      db.waiting--;
      resolve(release);
    });
  });
}

/** How many statements or transactions wait for the shared database of `dir` now (0 when it is not open). */
export function sharedPGliteWaiting(dir: string): number {
  return open.get(dir)?.waiting ?? 0;
}

/** A knex for `schema` on the shared database of `dir`; its destroy() releases the database (closed with the last). */
export function sharedPGliteKnex(dir: string, schema: string, acquireTimeoutMs = 30_000): Knex {
  let db = open.get(dir);
  if (!db) {
    initialise(dir);
    db = { pglite: createPGlite(dir), refs: 0, tail: Promise.resolve(), waiting: 0 };
    open.set(dir, db);
  }
  db.refs++;
  const shared = db;
  let held: (() => void) | undefined;
  let released = false;

  const Base = ClientPgLite as unknown as new (config: Knex.Config) => KnexClient;
  class SharedClient extends Base {
    override async acquireConnection(): Promise<PGliteLike> {
      const release = await lock(shared, acquireTimeoutMs);
      try {
        const connection = await super.acquireConnection();
        if (shared.searchPath !== schema) {
          await connection.exec(`set search_path to "${schema}"`);
          shared.searchPath = schema;
        }
        held = release;
        return connection;
      } catch (err) {
        release();
        throw err;
      }
    }
    /**
     * A statement with parameters (every query the stores build) as a prepared statement of this schema; a
     * transaction's BEGIN, COMMIT or ROLLBACK (no parameters, no rows) through the simple protocol; the rest (the
     * migrations' statements) through PGlite's `query`.
     */
    override async _query(connection: PGliteLike, obj: KnexQuery): Promise<KnexQuery> {
      if (obj.bindings?.length && isEmpty(obj.options)) {
        obj.response = await connection.prepared(`${schema}\u0000${obj.sql}`, obj.sql, obj.bindings);
        return obj;
      }
      if (obj.bindings?.length || !TRANSACTION_CONTROL.test(obj.sql)) return super._query(connection, obj);
      await connection.exec(obj.sql);
      obj.response = { rows: [], fields: [], affectedRows: 0 };
      return obj;
    }
    override async releaseConnection(connection: PGliteLike): Promise<void> {
      try {
        await super.releaseConnection(connection);
      } finally {
        const release = held;
        held = undefined;
        release?.();
      }
    }
    override async destroyRawConnection(): Promise<void> {
      // The database outlives each service's knex: the last release closes it (below).
    }
    override async destroy(callback?: () => void): Promise<void> {
      await super.destroy();
      if (!released) {
        released = true;
        if (--shared.refs === 0) {
          open.delete(dir);
          await shared.pglite.close();
        }
      }
      callback?.();
    }
  }
  return knexFactory({
    client: SharedClient as unknown as typeof ClientPgLite,
    dialect: 'postgres',
    connection: () => ({ pglite: shared.pglite }),
    searchPath: [schema],
    acquireConnectionTimeout: acquireTimeoutMs,
  } as Knex.Config);
}

/** What knex hands a client's `_query`: the statement, and the response it reads back. */
interface KnexQuery {
  sql: string;
  bindings?: unknown[];
  /** PGlite query options (`rowMode`), when a query sets any. */
  options?: object;
  response?: unknown;
}

const isEmpty = (options: object | undefined) => options === undefined || Object.keys(options).length === 0;

const TRANSACTION_CONTROL = /^(BEGIN|COMMIT|ROLLBACK);?$/i;

/** The knex Client methods overridden above. */
interface KnexClient {
  _query(connection: PGliteLike, obj: KnexQuery): Promise<KnexQuery>;
  acquireConnection(): Promise<PGliteLike>;
  releaseConnection(connection: PGliteLike): Promise<void>;
  destroyRawConnection(connection: PGliteLike): Promise<void>;
  destroy(callback?: () => void): Promise<void>;
}
