import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDb, pgliteDataDir, sharedPgliteDataDir, type Db, type Migration } from '../src';

const migrations: Migration[] = [
  {
    name: '001_items',
    up: async (k) => {
      await k.schema.createTable('items', (t) => {
        t.text('id').primary();
        t.integer('n').notNullable().defaultTo(0);
      });
    },
    down: async (k) => {
      await k.schema.dropTable('items');
    },
  },
  {
    name: '002_items_label',
    up: async (k) => {
      await k.schema.alterTable('items', (t) => t.text('label'));
    },
  },
];

const cfg = { VISION_MODE: 'standalone' as const, DATABASE_URL: undefined, VISION_DATA_DIR: ':memory:' };

describe('openDb on PGlite', () => {
  let db: Db;
  beforeAll(async () => {
    db = await openDb(cfg, { schema: 'svc_a', migrations });
  });
  afterAll(async () => {
    await db.close();
  });

  it('creates the schema, runs migrations in order and records them in the schema', async () => {
    expect(db.kind).toBe('pglite');
    await db.check();
    const tables = await db
      .knex('information_schema.tables')
      .where({ table_schema: 'svc_a' })
      .pluck('table_name');
    expect(tables).toEqual(expect.arrayContaining(['items', 'knex_migrations', 'knex_migrations_lock']));
    const cols = await db
      .knex('information_schema.columns')
      .where({ table_schema: 'svc_a', table_name: 'items' })
      .pluck('column_name');
    expect(cols.sort()).toEqual(['id', 'label', 'n']);
    const done = await db.knex.withSchema('svc_a').table('knex_migrations').orderBy('id').pluck('name');
    expect(done).toEqual(['001_items', '002_items_label']);
    // Unqualified names resolve in the service schema.
    await db.knex('items').insert({ id: 'a', n: 1 });
    expect(await db.knex.withSchema('svc_a').table('items').pluck('id')).toEqual(['a']);
    await db.knex('items').del();
  });

  it('commits transactions and rolls back on error', async () => {
    await db.knex.transaction(async (trx) => {
      await trx('items').insert({ id: 't1', n: 1 });
    });
    await expect(
      db.knex.transaction(async (trx) => {
        await trx('items').insert({ id: 't2', n: 1 });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await db.knex('items').whereIn('id', ['t1', 't2']).pluck('id')).toEqual(['t1']);
  });

  it('supports forUpdate inside a transaction', async () => {
    const n = await db.knex.transaction(async (trx) => {
      const row = await trx('items').where({ id: 't1' }).forUpdate().first();
      await trx('items')
        .where({ id: 't1' })
        .update({ n: (row?.n as number) + 1 });
      return (await trx('items').where({ id: 't1' }).first())?.n as number;
    });
    expect(n).toBe(2);
  });

  it('supports onConflict ignore and merge', async () => {
    await db.knex('items').insert({ id: 'c', n: 1, label: 'first' });
    const ignored = await db
      .knex('items')
      .insert({ id: 'c', n: 5, label: 'second' })
      .onConflict('id')
      .ignore()
      .returning('id');
    expect(ignored).toEqual([]);
    expect(await db.knex('items').where({ id: 'c' }).first()).toMatchObject({ n: 1, label: 'first' });
    await db.knex('items').insert({ id: 'c', n: 7, label: 'third' }).onConflict('id').merge(['n']);
    expect(await db.knex('items').where({ id: 'c' }).first()).toMatchObject({ n: 7, label: 'first' });
    const affected = await db.knex('items').where({ id: 'c' }).update({ n: 8 });
    expect(affected).toBe(1);
  });

  it('returns values that behave like local ones (Date, JSON, bytes) and accepts Date parameters', async () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    const row = (await db.knex.raw(
      'select ?::timestamptz as at, \'{"a":[1,{"b":true}]}\'::jsonb as doc, \'\\x0102\'::bytea as bin',
      [at],
    )) as { rows: Array<{ at: unknown; doc: unknown; bin: unknown }> };
    const r = row.rows[0];
    expect(r.at).toBeInstanceOf(Date);
    expect((r.at as Date).getTime()).toBe(at.getTime());
    expect(r.doc).toStrictEqual({ a: [1, { b: true }] });
    expect(Buffer.from(r.bin as Uint8Array).equals(Buffer.from([1, 2]))).toBe(true);
  });

  it('reports SQL errors as Error instances with the Postgres code', async () => {
    const err: unknown = await db
      .knex('items')
      .insert({ id: 't1' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as { code?: string }).code).toBe('23505');
  });

  it('refuses an invalid schema name', async () => {
    await expect(openDb(cfg, { schema: 'bad-name"; drop', migrations: [] })).rejects.toThrow(
      'invalid schema name',
    );
  });
});

describe('openDb on a PGlite data directory', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vision-db-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('persists per service and applies only new migrations on reopen', async () => {
    const fileCfg = { ...cfg, VISION_DATA_DIR: dir };
    const first = await openDb(fileCfg, { schema: 'svc_b', migrations: migrations.slice(0, 1) });
    await first.knex('items').insert({ id: 'kept', n: 3 });
    await first.close();
    expect(existsSync(sharedPgliteDataDir(dir))).toBe(true);
    expect(existsSync(pgliteDataDir(dir, 'svc_b'))).toBe(false);

    const second = await openDb(fileCfg, { schema: 'svc_b', migrations });
    try {
      expect(await second.knex('items').where({ id: 'kept' }).first()).toMatchObject({ n: 3, label: null });
      expect(
        await second.knex.withSchema('svc_b').table('knex_migrations').orderBy('id').pluck('name'),
      ).toEqual(['001_items', '002_items_label']);
    } finally {
      await second.close();
    }
  });

  it('opens a schema that a newer version migrated further (a rollback): its migrations kept, none undone', async () => {
    const fileCfg = { ...cfg, VISION_DATA_DIR: dir };
    const newer = await openDb(fileCfg, { schema: 'svc_c', migrations });
    await newer.knex('items').insert({ id: 'new', n: 1, label: 'x' });
    await newer.close();
    const older = await openDb(fileCfg, { schema: 'svc_c', migrations: migrations.slice(0, 1) });
    try {
      expect(await older.knex('items').select('id', 'n')).toEqual([{ id: 'new', n: 1 }]);
      await older.knex('items').insert({ id: 'old', n: 2 });
      expect(
        await older.knex.withSchema('svc_c').table('knex_migrations').orderBy('id').pluck('name'),
      ).toEqual(['001_items', '002_items_label']);
    } finally {
      await older.close();
    }
  });
});
