/**
 * The quota ledger and its outbox relay on the stack's real Postgres, two replicas over one database:
 * concurrent holds and charges never take a day past its limit (the counter row is locked by one upsert),
 * a hold sent twice at once is held once,
 * and two relays running at once publish every event exactly once (one claiming statement with
 * `FOR UPDATE SKIP LOCKED`). PGlite has a single connection, so only Postgres can show either.
 */
import { randomUUID } from 'node:crypto';
import knexFactory from 'knex';
import {
  type Db,
  InProcessBus,
  type IncomingMessage,
  TOPICS,
  createLogger,
  openDb,
  systemClock,
} from '@vision/shared';
import { createQuota, migrations, type QuotaParts } from '../../services/quota/src/index';
import { readStackEnv } from '../../scripts/distributed/launcher';
import { describeDistributed } from './support';
import { verifierOfAll } from '../helpers/identity';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

const LIMIT = 25;

describeDistributed('quota ledger on Postgres, two replicas', () => {
  const { pgUrl } = readStackEnv();
  const name = `ledger_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = knexFactory({ client: 'pg', connection: `${pgUrl}/postgres` });
  const logger = createLogger('ledger-pg', { level: 'silent' });
  const bus = new InProcessBus();
  const published: string[] = [];
  const types: string[] = [];
  const dbs: Db[] = [];
  let replicas: QuotaParts[] = [];

  beforeAll(async () => {
    await admin.raw(`create database "${name}"`);
    await bus.subscribe({
      topic: TOPICS.quotaEvents,
      group: 'ledger-pg',
      handleBatch: async (messages: IncomingMessage[]) => {
        for (const m of messages) {
          const e = m.value as { event_id: string; type: string };
          published.push(e.event_id);
          types.push(e.type);
        }
      },
    });
    for (let i = 0; i < 2; i++) {
      const db = await openDb(
        { VISION_MODE: 'distributed', DATABASE_URL: `${pgUrl}/${name}`, VISION_DATA_DIR: '' },
        { schema: 'quota', migrations, logger },
      );
      dbs.push(db);
    }
    replicas = dbs.map((db) =>
      createQuota({
        db,
        bus,
        clock: systemClock,
        logger,
        identity: verifierOfAll(),
        limits: { video: 5, image: LIMIT, overrides: {} },
        holdTtlMs: 600_000,
        sweepIntervalMs: 3_600_000,
        outboxIntervalMs: 3_600_000,
      }),
    );
  }, 60_000);

  afterAll(async () => {
    for (const db of dbs) await db.close();
    await admin.raw(`drop database if exists "${name}" with (force)`);
    await admin.destroy();
  });

  it('grants exactly the limit to 40 concurrent holds and charges, and settles them all', async () => {
    const attempts = Array.from({ length: 40 }, (_, i) => {
      const ledger = replicas[i % 2].ledger;
      return i % 4 < 2
        ? ledger.hold('acme', `h-${i}`, 'image', 1).then(() => `h-${i}`)
        : ledger.charge('acme', `c-${i}`, 'image', 1).then(() => `c-${i}`);
    });
    const outcomes = await Promise.allSettled(attempts);
    const granted = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as { code?: string }] : []));
    expect(granted).toHaveLength(LIMIT);
    expect(refused.map((e) => e.code)).toEqual(Array(40 - LIMIT).fill('OP-QUOTA-DAILY-EXHAUSTED'));
    const holds = granted.filter((id) => id.startsWith('h-'));
    const before = (await replicas[0].ledger.usage('acme')).image;
    expect(before).toMatchObject({ used: LIMIT - holds.length, held: holds.length, remaining: 0 });

    // Settle every hold at once from both replicas, each with its one unit, and once more (a replay).
    await Promise.all(holds.map((id, i) => replicas[i % 2].ledger.settle('acme', id, 1)));
    await Promise.all(holds.map((id, i) => replicas[(i + 1) % 2].ledger.settle('acme', id, 1)));
    expect((await replicas[1].ledger.usage('acme')).image).toMatchObject({
      used: LIMIT,
      held: 0,
      remaining: 0,
    });

    // Both relays drain the outbox at once: every event (a hold or charge each, a settle per hold, and the
    // day's one `exhausted`, written with the change that used up its last unit) once.
    await Promise.all([replicas[0].relay.flush(), replicas[1].relay.flush(), replicas[0].relay.flush()]);
    await replicas[1].relay.flush();
    expect(published).toHaveLength(LIMIT + holds.length + 1);
    expect(types.filter((t) => t === 'exhausted')).toHaveLength(1);
    expect(new Set(published).size).toBe(published.length);
    const unsent = await dbs[0].knex('outbox').whereNull('sent_at').count({ n: '*' }).first();
    expect(Number(unsent?.n)).toBe(0);
  }, 60_000);

  it('a hold sent twice at once (a retry racing the first request) is held once', async () => {
    // Each hold's insert and the day's counter lock are one statement: the request that meets the other's key
    // must answer as a replay (created: false) and lock nothing.
    const ids = Array.from({ length: 20 }, (_, i) => `twice-${i}`);
    const answers = await Promise.all(
      ids.flatMap((id) => [0, 1].map((r) => replicas[r].ledger.hold('twice', id, 'image', 1))),
    );
    expect(answers.filter((a) => a.created)).toHaveLength(ids.length);
    expect((await replicas[0].ledger.usage('twice')).image).toMatchObject({ used: 0, held: ids.length });
    const rows = await dbs[1].knex('holds').where({ subject: 'twice' }).count({ n: '*' }).first();
    expect(Number(rows?.n)).toBe(ids.length);
  }, 60_000);
});
