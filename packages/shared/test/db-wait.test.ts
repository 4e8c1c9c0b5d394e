import { closedPort } from '../../../test/helpers/closed-port';
import { Writable } from 'node:stream';
import type { Knex } from 'knex';
import { createLogger, openDb } from '../src';
import { waitForDatabase } from '../src/db/db-wait';

/**
 * A distributed service waits for its Postgres at start: a server that is down, starting, loaded or out of
 * connection slots is tried again until the wait's budget is spent, each retry logged with its code only; a
 * wrong password is not waited for.
 */
function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { lines, logger: createLogger('test', { level: 'info', destination: stream }) };
}

/** A knex whose `raw` fails with each error of `failures` in turn, then answers. */
function flakyKnex(failures: unknown[]): { knex: Knex; calls: () => number } {
  let calls = 0;
  const knex = {
    raw: async () => {
      const err = failures[calls++];
      if (err !== undefined) throw err;
      return { rows: [{ '?column?': 1 }] };
    },
  } as unknown as Knex;
  return { knex, calls: () => calls };
}

function pgError(code: string, message = 'failed'): Error {
  return Object.assign(new Error(message), { code });
}

function knexTimeout(): Error {
  const err = new Error('Knex: Timeout acquiring a connection. The pool is probably full.');
  err.name = 'KnexTimeoutError';
  return err;
}

/** A loopback port nothing listens on. */
describe('waiting for Postgres at start', () => {
  it('tries again on a refused connection, a server starting up, no free slot and a pool timeout, then goes on', async () => {
    const { lines, logger } = capture();
    const { knex, calls } = flakyKnex([
      pgError('ECONNREFUSED'),
      pgError('57P03', 'the database system is starting up'),
      pgError('53300', 'sorry, too many clients already'),
      knexTimeout(),
      new Error('Connection terminated unexpectedly'),
    ]);
    await waitForDatabase(knex, { logger, firstPauseMs: 5, budgetMs: 10_000 });
    expect(calls()).toBe(6);
    const retries = lines
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'database not reachable yet; trying again');
    expect(retries.map((l) => l.reason)).toEqual([
      'ECONNREFUSED',
      '57P03',
      '53300',
      'KnexTimeoutError',
      'Error',
    ]);
    expect(lines.some((l) => JSON.parse(l).msg === 'database reachable')).toBe(true);
  });

  it('does not wait for a wrong password, database or privilege', async () => {
    for (const code of ['28P01', '3D000', '42501']) {
      const { knex, calls } = flakyKnex([pgError(code), pgError(code)]);
      await expect(waitForDatabase(knex, { firstPauseMs: 5 })).rejects.toMatchObject({ code });
      expect(calls()).toBe(1);
    }
  });

  it('gives up with the last failure once its budget is spent', async () => {
    const { knex, calls } = flakyKnex(Array.from({ length: 100 }, () => pgError('ECONNREFUSED')));
    const started = Date.now();
    await expect(waitForDatabase(knex, { firstPauseMs: 20, budgetMs: 300 })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(calls()).toBeGreaterThan(1);
    expect(calls()).toBeLessThan(10);
  });

  it('openDb in distributed mode retries a refused Postgres and logs no part of its URL', async () => {
    const port = await closedPort();
    const url = `postgres://svc:pw-never-logged@127.0.0.1:${port}/vision`;
    const { lines, logger } = capture();
    await expect(
      openDb(
        { VISION_MODE: 'distributed', DATABASE_URL: url, VISION_DATA_DIR: '' },
        { schema: 'results', migrations: [], logger, connectWaitMs: 2000 },
      ),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    const retries = lines.filter((l) => l.includes('database not reachable yet'));
    expect(retries.length).toBeGreaterThanOrEqual(2);
    expect(lines.join('')).not.toMatch(/pw-never-logged|svc:|127\.0\.0\.1/);
  });
});
