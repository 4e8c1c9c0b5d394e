import { Blob } from 'node:buffer';
import { readFileSync } from 'node:fs';
import Module from 'node:module';
import vm from 'node:vm';
import type { PGlite as PGliteType } from '@electric-sql/pglite';
import { PreparedStatements, type PGliteProtocol } from './pglite-prepared';

/**
 * The minimal PGlite surface knex-pglite uses: `waitReady`, `query`, `close`; and `exec`, which runs statements
 * without parameters through the simple protocol (one call into WebAssembly where `query` makes six).
 */
export interface PGliteLike {
  readonly waitReady: Promise<void>;
  query(sql: string, params?: unknown[], options?: object): Promise<unknown>;
  exec(sql: string): Promise<unknown>;
  /** `query(sql, params)` as a statement kept prepared under `key` (pglite-prepared.ts): one call into WebAssembly. */
  prepared(key: string, sql: string, params: readonly unknown[]): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Jest runs modules in a vm context without dynamic import() unless node runs with
 * --experimental-vm-modules, and PGlite's WASM loader needs dynamic import(). In that one case PGlite
 * is loaded with Node's own require, outside the sandbox, and values crossing the boundary are copied
 * into the sandbox's realm (so `instanceof Date`, toStrictEqual and zod behave as they do in
 * production). Everywhere else PGlite is used directly.
 */
function sandboxedWithoutDynamicImport(): boolean {
  return (
    process.env.JEST_WORKER_ID !== undefined &&
    typeof (vm as { SourceTextModule?: unknown }).SourceTextModule !== 'function'
  );
}

type PGliteCtor = new (dataDir?: string, options?: { loadDataDir?: Blob }) => PGliteType;
type PGliteModule = PGliteProtocol & { PGlite: PGliteCtor };

function outsideRealm(value: unknown): unknown {
  // Parameters: the outer realm's PGlite checks `instanceof Date` / `instanceof Uint8Array`.
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (Array.isArray(value)) return value.map(outsideRealm);
  return value;
}

function intoRealm(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object' || depth > 64) return value;
  const tag = Object.prototype.toString.call(value);
  if (tag === '[object Date]') return new Date((value as Date).getTime());
  // COPY ... TO '/dev/blob' output: only ever handed back to PGlite (pglite-upgrade.ts).
  if (tag === '[object Blob]') return value;
  if (ArrayBuffer.isView(value)) {
    const v = value as Uint8Array;
    return Buffer.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
  }
  if (Array.isArray(value)) return value.map((v) => intoRealm(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = intoRealm(v, depth + 1);
  return out;
}

function errorIntoRealm(err: unknown): unknown {
  if (err === null || typeof err !== 'object' || err instanceof Error) return err;
  const e = err as { message?: unknown; name?: unknown; stack?: unknown };
  const local = new Error(typeof e.message === 'string' ? e.message : String(err));
  for (const [k, v] of Object.entries(err)) (local as unknown as Record<string, unknown>)[k] = v;
  if (typeof e.name === 'string') local.name = e.name;
  if (typeof e.stack === 'string') local.stack = e.stack;
  return local;
}

/**
 * The module of `moduleName`: `@electric-sql/pglite`, or an older release kept under an npm alias to read
 * databases it wrote (pglite-upgrade.ts). Loaded outside jest's sandbox there (above).
 */
function loadPGlite(moduleName = '@electric-sql/pglite'): PGliteModule {
  if (!sandboxedWithoutDynamicImport()) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(moduleName) as PGliteModule;
  }
  // Jest replaces createRequire, but Module._load is Node's own loader.
  const nodeModule = Module as unknown as {
    _load(request: string, parent: unknown, isMain: boolean): unknown;
  };
  return nodeModule._load(require.resolve(moduleName), null, false) as PGliteModule;
}

/**
 * What a new in-memory database starts from: VISION_PGLITE_TEMPLATE, when set, names a tarball of a fresh data
 * directory (PGlite's dumpDataDir; the test runner makes one per run), loaded instead of running initdb again
 * (about 1 s instead of 4-7 s on 2 cores). A new database on disk starts from it too (pglite-shared.ts).
 */
function memoryTemplate(): { loadDataDir: Blob } | undefined {
  const file = process.env.VISION_PGLITE_TEMPLATE;
  return file ? { loadDataDir: new Blob([readFileSync(file)]) } : undefined;
}

/** A tarball of a fresh PGlite data directory, as VISION_PGLITE_TEMPLATE names one. */
export async function freshDataDirTarball(): Promise<Buffer> {
  const db = new (loadPGlite().PGlite)();
  await db.waitReady;
  const dump = await db.dumpDataDir('none');
  await db.close();
  return Buffer.from(await dump.arrayBuffer());
}

/** A PGlite instance on `dataDir` (in memory when undefined), of `moduleName` (loadPGlite). */
export function createPGlite(dataDir: string | undefined, moduleName?: string): PGliteLike {
  const mod = loadPGlite(moduleName);
  const options = dataDir === undefined && moduleName === undefined ? memoryTemplate() : undefined;
  const pg = new mod.PGlite(dataDir, options);
  // Made at the first prepared statement: an older release read only by `query` (pglite-upgrade.ts) needs none.
  let statements: PreparedStatements | undefined;
  const prepared = (key: string, sql: string, params: readonly unknown[]) =>
    (statements ??= new PreparedStatements(pg, mod)).run(key, sql, params);
  if (!sandboxedWithoutDynamicImport()) return Object.assign(pg, { prepared });
  return {
    waitReady: pg.waitReady.then(() => undefined),
    async query(sql, params, options) {
      try {
        return intoRealm(await pg.query(sql, params?.map(outsideRealm), options));
      } catch (err) {
        throw errorIntoRealm(err);
      }
    },
    async exec(sql) {
      try {
        return intoRealm(await pg.exec(sql));
      } catch (err) {
        throw errorIntoRealm(err);
      }
    },
    async prepared(key, sql, params) {
      try {
        return intoRealm(await prepared(key, sql, params.map(outsideRealm)));
      } catch (err) {
        throw errorIntoRealm(err);
      }
    },
    close: () => pg.close(),
  };
}
