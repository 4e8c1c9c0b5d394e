import { createPGlite, type PGliteLike } from '../src/db/pglite-loader';
import { PREPARED_CAPACITY } from '../src/db/pglite-prepared';

/**
 * A statement PGlite keeps prepared (pglite-prepared.ts) answers what PGlite's `query` answers for the same text and
 * parameters, keeps statements of the same text in two schemas apart, holds at most PREPARED_CAPACITY statements, and
 * survives a table altered under it.
 */
let pg: PGliteLike;
const query = async (sql: string, params?: unknown[]) =>
  pg.query(sql, params) as Promise<{ rows: unknown[] }>;
const prepared = async (key: string, sql: string, params: unknown[]) =>
  pg.prepared(key, sql, params) as Promise<{ rows: unknown[]; affectedRows?: number }>;

beforeAll(async () => {
  pg = createPGlite(undefined);
  await pg.waitReady;
  for (const s of ['a', 'b'])
    await pg.exec(
      `create schema ${s}; create table ${s}.t (id text primary key, v jsonb, n int, at timestamptz,` +
        ` tags text[], bin bytea, flag boolean)`,
    );
}, 60_000);

afterAll(() => pg?.close());

const ROW = [
  'x',
  { nested: [1, 'two', null] },
  3,
  new Date('2026-01-02T03:04:05.678Z'),
  ['p', 'q r'],
  Buffer.from([0, 1, 255]),
  true,
];
const INSERT = 'insert into t values ($1, $2, $3, $4, $5, $6, $7) returning *';

it('answers rows, fields, the command and the rows affected as PGlite query does, parameters of every kind', async () => {
  await pg.exec('set search_path to a');
  const viaPrepared = await prepared('a\0insert', INSERT, ROW);
  await query('delete from t');
  const viaQuery = await query(INSERT, ROW);
  expect(viaPrepared).toStrictEqual(viaQuery);
  // Run again, the statement is bound and executed only; nulls and an update's count.
  const update = 'update t set v = $1, bin = $2 where id = $3';
  expect(await prepared('a\0update', update, [null, null, 'x'])).toStrictEqual(
    await query(update, [null, null, 'x']),
  );
  expect((await prepared('a\0update', update, [{ k: 1 }, null, 'x'])).affectedRows).toBe(1);
  expect((await prepared('a\0update', update, [{ k: 1 }, null, 'none'])).affectedRows).toBe(0);
  const select = 'select * from t where id = $1';
  expect(await prepared('a\0select', select, ['x'])).toStrictEqual(await query(select, ['x']));
});

it('keeps the same text in two schemas as two statements', async () => {
  const select = 'select n from t where id = $1';
  await pg.exec('set search_path to b');
  await query('insert into t (id, n) values ($1, $2)', ['x', 42]);
  expect((await prepared('b\0n', select, ['x'])).rows).toEqual([{ n: 42 }]);
  await pg.exec('set search_path to a');
  expect((await prepared('a\0n', select, ['x'])).rows).toEqual([{ n: 3 }]);
});

it('fails as query fails, with the error code, and runs on after it', async () => {
  await pg.exec('set search_path to a');
  await expect(prepared('a\0insert', INSERT, ROW)).rejects.toMatchObject({ code: '23505' });
  await expect(prepared('a\0bad', 'select * from missing where id = $1', ['x'])).rejects.toMatchObject({
    code: '42P01',
  });
  expect((await prepared('a\0select', 'select * from t where id = $1', ['x'])).rows).toHaveLength(1);
});

it(`holds at most ${PREPARED_CAPACITY} statements, closing the least recently run`, async () => {
  await pg.exec('set search_path to a');
  for (let i = 0; i < PREPARED_CAPACITY + 20; i++)
    await prepared(`a\0many ${i}`, `select $1::int + ${i} as n`, [1]);
  // The next run sends the Close of the last one evicted first.
  expect(
    (await prepared('a\0count', 'select count(*)::int as n from pg_prepared_statements where $1', [true]))
      .rows,
  ).toEqual([{ n: PREPARED_CAPACITY }]);
  // An evicted statement is prepared again when it comes back.
  expect((await prepared('a\0many 0', 'select $1::int + 0 as n', [5])).rows).toEqual([{ n: 5 }]);
});

it('runs a statement whose table was altered since it was prepared, outside a transaction and after one', async () => {
  await pg.exec('set search_path to a');
  const select = 'select * from t where id = $1';
  await prepared('a\0select', select, ['x']);
  await pg.exec('alter table t add column extra text');
  expect((await prepared('a\0select', select, ['x'])).rows).toEqual([
    expect.objectContaining({ extra: null }),
  ]);
  // Prepared again with the new column, then the column goes.
  expect((await prepared('a\0select', select, ['x'])).rows).toEqual([
    expect.objectContaining({ extra: null }),
  ]);
  await pg.exec('alter table t drop column extra');
  await pg.exec('begin');
  // Inside a transaction the first run after the change fails, which aborts the transaction.
  await expect(prepared('a\0select', select, ['x'])).rejects.toMatchObject({ code: '0A000' });
  await pg.exec('rollback');
  expect((await prepared('a\0select', select, ['x'])).rows).toEqual([
    expect.not.objectContaining({ extra: expect.anything() }),
  ]);
});
