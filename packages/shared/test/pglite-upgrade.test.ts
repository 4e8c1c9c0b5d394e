import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import { openDb, pgliteDataDir, type Migration } from '../src';
import { createPGlite } from '../src/db/pglite-loader';
import { PG_MAJOR, dataDirMajor } from '../src/db/pglite-upgrade';

/**
 * Standalone data written by the PGlite of earlier versions (0.3, PostgreSQL 17, kept as `pglite-pg17`):
 * openDb copies it into the current PGlite, rows, JSON, times and sequences alike, runs the migrations
 * the old one lacked, and keeps the old directory beside the new one.
 */
const SCHEMA = 'svc_up';
const migrations: Migration[] = [
  {
    name: '001_items',
    up: async (k) => {
      await k.schema.createTable('items', (t) => {
        t.increments('id');
        t.text('key').notNullable().unique();
        t.jsonb('doc');
        t.timestamp('at', { useTz: true });
        t.binary('bytes');
      });
    },
  },
  {
    name: '002_events',
    up: async (k) => {
      await k.schema.createTable('events', (t) => {
        t.bigIncrements('id');
        t.text('topic').notNullable();
      });
      await k.schema.createTable('notes', (t) => t.text('text')); // left empty
    },
  },
];
const later: Migration = {
  name: '003_items_label',
  up: async (k) => {
    await k.schema.alterTable('items', (t) => t.text('label').defaultTo('new'));
  },
};

const AT = new Date('2026-11-20T10:11:12.345Z');

/** A data directory as the previous version left it: PostgreSQL 17, migrations 001-002, some rows. */
async function writeLegacy(dir: string): Promise<void> {
  mkdirSync(path.dirname(dir), { recursive: true });
  const pglite = createPGlite(dir, 'pglite-pg17');
  const knex: Knex = knexFactory({
    client: ClientPgLite,
    dialect: 'postgres',
    connection: () => ({ pglite }),
    searchPath: [SCHEMA],
  } as Knex.Config);
  try {
    await knex.raw('create schema ??', [SCHEMA]);
    await knex.migrate.latest({
      schemaName: SCHEMA,
      tableName: 'knex_migrations',
      migrationSource: {
        getMigrations: async () => migrations,
        getMigrationName: (m: Migration) => m.name,
        getMigration: async (m: Migration) => ({ up: (k: Knex) => m.up(k), down: async () => undefined }),
      },
    });
    for (let i = 0; i < 3; i++)
      await knex('items').insert({
        key: `k${i}`,
        doc: JSON.stringify({ i, quote: 'a "b", c\nd', list: [1, 2] }),
        at: AT,
        bytes: Buffer.from([0, i, 255]),
      });
    await knex('items').where({ key: 'k1' }).del(); // the sequence is ahead of max(id)
    await knex('events').insert([{ topic: 'a' }, { topic: 'b' }]);
  } finally {
    await knex.destroy();
  }
}

describe('standalone databases of PostgreSQL 17 (PGlite 0.3)', () => {
  let root: string;
  let dir: string;
  const cfg = () => ({ VISION_MODE: 'standalone' as const, DATABASE_URL: undefined, VISION_DATA_DIR: root });
  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'pglite-upgrade-'));
    dir = pgliteDataDir(root, SCHEMA);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('are copied into the current PGlite with their rows and sequences, the old kept beside', async () => {
    await writeLegacy(dir);
    expect(dataDirMajor(dir)).toBe('17');
    const db = await openDb(cfg(), { schema: SCHEMA, migrations: [...migrations, later] });
    try {
      // Upgraded, then moved into the shared database (pglite-shared.test.ts).
      expect(existsSync(dir)).toBe(false);
      expect(dataDirMajor(`${dir}.merged`)).toBe(PG_MAJOR);
      expect(dataDirMajor(`${dir}.pg17`)).toBe('17');
      expect(existsSync(`${dir}.upgrading`) || existsSync(`${dir}.upgraded`)).toBe(false);
      const items = await db.knex('items').orderBy('id');
      expect(items.map((r) => [r.id, r.key, r.doc, r.at, r.bytes, r.label])).toEqual([
        [1, 'k0', { i: 0, quote: 'a "b", c\nd', list: [1, 2] }, AT, Buffer.from([0, 0, 255]), 'new'],
        [3, 'k2', { i: 2, quote: 'a "b", c\nd', list: [1, 2] }, AT, Buffer.from([0, 2, 255]), 'new'],
      ]);
      // Sequences go on where they were, not at max(id) + 1 or at 1.
      const [next] = await db.knex('items').insert({ key: 'k3' }).returning('id');
      expect(next.id).toBe(4);
      const [event] = await db.knex('events').insert({ topic: 'c' }).returning('id');
      expect(Number(event.id)).toBe(3);
      expect(await db.knex('notes').select()).toEqual([]);
      const done = await db.knex('knex_migrations').orderBy('id').pluck('name');
      expect(done).toEqual(['001_items', '002_events', '003_items_label']);
    } finally {
      await db.close();
    }
    // Opened again: nothing more to do.
    const again = await openDb(cfg(), { schema: SCHEMA, migrations: [...migrations, later] });
    const [{ n }] = await again.knex('items').count({ n: '*' });
    expect(Number(n)).toBe(3);
    await again.close();
    expect(existsSync(`${dir}.pg17-`)).toBe(false);
  });

  it('finishes an upgrade interrupted between its renames', async () => {
    await writeLegacy(dir);
    const upgraded = await openDb(cfg(), { schema: SCHEMA, migrations });
    await upgraded.close();
    // As if the process died after the copy: the new directory staged, the old one still in place.
    renameSync(`${dir}.merged`, `${dir}.upgraded`);
    renameSync(`${dir}.pg17`, dir);
    const db = await openDb(cfg(), { schema: SCHEMA, migrations });
    try {
      expect(dataDirMajor(`${dir}.merged`)).toBe(PG_MAJOR);
      expect(dataDirMajor(`${dir}.pg17`)).toBe('17');
      expect(await db.knex('items').orderBy('id').pluck('key')).toEqual(['k0', 'k2']);
    } finally {
      await db.close();
    }
  });

  it('leaves a directory of another major version alone and says what to do', async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'PG_VERSION'), '16\n');
    await expect(openDb(cfg(), { schema: SCHEMA, migrations })).rejects.toThrow(
      /written by PostgreSQL 16.*move it aside/,
    );
    expect(dataDirMajor(dir)).toBe('16');
  });

  it('refuses a database with migrations this version does not know, and leaves it as it was', async () => {
    await writeLegacy(dir);
    await expect(openDb(cfg(), { schema: SCHEMA, migrations: [migrations[0]] })).rejects.toThrow(
      /migrations this version does not know \(002_events\)/,
    );
    expect(dataDirMajor(dir)).toBe('17');
    expect(existsSync(`${dir}.pg17`)).toBe(false);
  });
});
