import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import { openDb, pgliteDataDir, sharedPgliteDataDir, type Migration } from '../src';
import { createPGlite } from '../src/db/pglite-loader';
import { sharedPGliteKnex, sharedPGliteWaiting } from '../src/db/pglite-shared';

/**
 * Standalone keeps every service's schema in one PGlite database (pg/vision). Services that share it see
 * only their own schema, their transactions never interleave, and a data directory of the earlier layout
 * (one PGlite per service under pg/<schema>, as openDb wrote it before) is moved into it on open.
 */
const items: Migration = {
  name: '001_items',
  up: async (k) => {
    await k.schema.createTable('items', (t) => {
      t.increments('id');
      t.text('owner').notNullable();
    });
  },
};
const labels: Migration = {
  name: '002_label',
  up: async (k) => {
    await k.schema.alterTable('items', (t) => t.text('label').defaultTo('new'));
  },
};

/** A service's database as the earlier layout left it: its own PGlite, migration 001, rows, a sequence ahead. */
async function writeEarlierLayout(root: string, schema: string, rows: number): Promise<void> {
  const dir = pgliteDataDir(root, schema);
  mkdirSync(path.dirname(dir), { recursive: true });
  const pglite = createPGlite(dir);
  const knex: Knex = knexFactory({
    client: ClientPgLite,
    dialect: 'postgres',
    connection: () => ({ pglite }),
    searchPath: [schema],
  } as Knex.Config);
  try {
    await knex.raw('create schema ??', [schema]);
    await knex.migrate.latest({
      schemaName: schema,
      tableName: 'knex_migrations',
      migrationSource: {
        getMigrations: async () => [items],
        getMigrationName: (m: Migration) => m.name,
        getMigration: async (m: Migration) => ({ up: (k: Knex) => m.up(k), down: async () => undefined }),
      },
    });
    for (let i = 0; i < rows + 1; i++) await knex('items').insert({ owner: schema });
    await knex('items')
      .where({ id: rows + 1 })
      .del();
  } finally {
    await knex.destroy();
  }
}

/** Resolves once `done()` holds, looking again on each turn of the event loop. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setImmediate(r));
}

describe('one PGlite database for every standalone service', () => {
  let root: string;
  const cfg = () => ({ VISION_MODE: 'standalone' as const, DATABASE_URL: undefined, VISION_DATA_DIR: root });
  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'pglite-shared-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('gives each service its own schema on the one database', async () => {
    const a = await openDb(cfg(), { schema: 'svc_a', migrations: [items] });
    const b = await openDb(cfg(), { schema: 'svc_b', migrations: [items] });
    try {
      await a.knex('items').insert({ owner: 'a' });
      await b.knex('items').insert([{ owner: 'b' }, { owner: 'b' }]);
      // Interleaved reads each see their own table of the same name.
      const seen = await Promise.all([a.knex('items').pluck('owner'), b.knex('items').pluck('owner')]);
      expect(seen).toEqual([['a'], ['b', 'b']]);
      expect(existsSync(sharedPgliteDataDir(root))).toBe(true);
      expect(existsSync(pgliteDataDir(root, 'svc_a'))).toBe(false);
    } finally {
      await a.close();
      await b.close();
    }
    // Closed by the last: reopened, the rows are there.
    const again = await openDb(cfg(), { schema: 'svc_b', migrations: [items] });
    expect(await again.knex('items').count({ n: '*' })).toEqual([{ n: 2 }]);
    await again.close();
  });

  it("never lets another service's statement into a transaction", async () => {
    const a = await openDb(cfg(), { schema: 'svc_a', migrations: [items] });
    const b = await openDb(cfg(), { schema: 'svc_b', migrations: [items] });
    try {
      let other: Promise<unknown> | undefined;
      await expect(
        a.knex.transaction(async (trx) => {
          await trx('items').insert({ owner: 'a' });
          other = b
            .knex('items')
            .insert({ owner: 'b' })
            .then(() => undefined);
          // b's statement waits for the connection until a's transaction is over...
          await until(() => sharedPGliteWaiting(sharedPgliteDataDir(root)) === 1);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      await other;
      // ...so a's rollback takes a's row only, and b's is written after it.
      expect(await a.knex('items').pluck('owner')).toEqual([]);
      expect(await b.knex('items').pluck('owner')).toEqual(['b']);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('says so when the database stays busy past the acquire timeout', async () => {
    const dir = sharedPgliteDataDir(root);
    // The database is opened first, with the default timeout: the case's timeout is the wait behind the other
    // service, not a loaded machine's start of PGlite.
    const opener = sharedPGliteKnex(dir, 'public');
    await opener.raw('select 1');
    const a = sharedPGliteKnex(dir, 'public', 300);
    const b = sharedPGliteKnex(dir, 'public', 300);
    try {
      await a.raw('select 1');
      await b.raw('select 1');
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let inside!: () => void;
      const started = new Promise<void>((r) => (inside = r));
      const tx = a.transaction(async () => {
        inside();
        await held;
      });
      // A transaction that cannot begin fails the case at once, rather than leaving it waiting to be inside.
      await Promise.race([started, tx]);
      await expect(b.raw('select 1')).rejects.toThrow(/busy for 300 ms/);
      release();
      await tx;
      await expect(b.raw('select 1 as one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
    } finally {
      await a.destroy();
      await b.destroy();
      await opener.destroy();
    }
  });

  it('moves each service database of the earlier layout into it, rows and sequences, once', async () => {
    await writeEarlierLayout(root, 'svc_a', 2);
    await writeEarlierLayout(root, 'svc_b', 3);
    const a = await openDb(cfg(), { schema: 'svc_a', migrations: [items, labels] });
    const b = await openDb(cfg(), { schema: 'svc_b', migrations: [items] });
    try {
      expect(await a.knex('items').orderBy('id').select('id', 'owner', 'label')).toEqual([
        { id: 1, owner: 'svc_a', label: 'new' },
        { id: 2, owner: 'svc_a', label: 'new' },
      ]);
      expect(await b.knex('items').orderBy('id').pluck('id')).toEqual([1, 2, 3]);
      // The sequence goes on where it was (row 4 of svc_b had been deleted).
      const [next] = await b.knex('items').insert({ owner: 'later' }).returning('id');
      expect(next.id).toBe(5);
      expect(await a.knex('knex_migrations').orderBy('id').pluck('name')).toEqual(['001_items', '002_label']);
      for (const s of ['svc_a', 'svc_b']) {
        expect(existsSync(pgliteDataDir(root, s))).toBe(false);
        expect(existsSync(`${pgliteDataDir(root, s)}.merged`)).toBe(true);
      }
    } finally {
      await a.close();
      await b.close();
    }
    const again = await openDb(cfg(), { schema: 'svc_b', migrations: [items] });
    expect(await again.knex('items').count({ n: '*' })).toEqual([{ n: 4 }]);
    await again.close();
  });

  it('redoes a move that was interrupted before the old directory was set aside', async () => {
    await writeEarlierLayout(root, 'svc_a', 2);
    // A partial copy in the shared database, as a process that died mid-move leaves it.
    const partial = await openDb(cfg(), { schema: 'svc_a', migrations: [items] });
    await partial.close();
    renameSync(`${pgliteDataDir(root, 'svc_a')}.merged`, pgliteDataDir(root, 'svc_a'));
    const half = sharedPGliteKnex(sharedPgliteDataDir(root), 'svc_a');
    await half('items').insert({ owner: 'half-copied' });
    await half.destroy();

    const db = await openDb(cfg(), { schema: 'svc_a', migrations: [items] });
    try {
      expect(await db.knex('items').orderBy('id').pluck('owner')).toEqual(['svc_a', 'svc_a']);
    } finally {
      await db.close();
    }
  });
});
