/**
 * Two tasks outbox relays over one database (two replicas of the chart) publish each row exactly
 * once: a relay claims its batch, so the other skips it while it is being published. A relay's loop
 * marks a batch sent in the statement that claims its next one, and its stop marks the last.
 */
import { createLogger, FakeClock, openDb } from '@vision/shared';
import { install, record, recorded } from '../../../test/helpers/statements';
import { migrations } from '../src/store/migrations';
import { tasksOutboxRelay } from '../src/workers/outbox';

// Opening in-memory PGlite and migrating takes a few seconds on a busy machine.
jest.setTimeout(120_000);

test('two relays publish each outbox row once', async () => {
  const logger = createLogger('tasks-test', { level: 'silent' });
  const db = await openDb(
    { VISION_MODE: 'standalone', DATABASE_URL: undefined, VISION_DATA_DIR: ':memory:' },
    { schema: 'tasks', migrations, logger },
  );
  try {
    const rows = Array.from({ length: 120 }, (_, i) => ({
      topic: 'vision.task-events',
      msg_key: `task-${i}`,
      value: JSON.stringify({ n: i }),
      created_at: new Date(),
    }));
    await db.knex('outbox').insert(rows);
    const published: string[] = [];
    // A slow broker: each publish takes a while, so the relays' rounds overlap.
    const bus = {
      publish: async (_topic: string, messages: { key: string }[]) => {
        await new Promise((r) => setTimeout(r, 20));
        published.push(...messages.map((m) => m.key));
      },
    };
    const clock = new FakeClock(new Date());
    const relays = [0, 1].map(() =>
      tasksOutboxRelay({ knex: db.knex, bus, clock, logger, intervalMs: 60_000, batchSize: 10 }),
    );
    await Promise.all([...relays.map((r) => r.flush()), ...relays.map((r) => r.flush())]);
    expect(published.sort()).toEqual(rows.map((r) => r.msg_key).sort());
    const unsent = await db.knex('outbox').whereNull('published_at');
    expect(unsent).toHaveLength(0);
  } finally {
    await db.close();
  }
});

test('the loop marks a batch sent in the statement that claims the next, and its stop marks the last', async () => {
  const logger = createLogger('tasks-test', { level: 'silent' });
  const db = await openDb(
    { VISION_MODE: 'standalone', DATABASE_URL: undefined, VISION_DATA_DIR: ':memory:' },
    { schema: 'tasks', migrations, logger },
  );
  const row = (i: number) => ({
    topic: 'vision.task-events',
    msg_key: `task-${i}`,
    value: JSON.stringify({ n: i }),
    created_at: new Date(),
  });
  const published: string[] = [];
  const bus = {
    publish: async (_topic: string, messages: { key: string }[]) => {
      published.push(...messages.map((m) => m.key));
    },
  };
  const relay = tasksOutboxRelay({
    knex: db.knex,
    bus,
    clock: new FakeClock(new Date()),
    logger,
    intervalMs: 60_000,
  });
  const unsent = async () =>
    ((await db.knex('outbox').whereNull('published_at').orderBy('id')) as { msg_key: string }[]).map(
      (r) => r.msg_key,
    );
  /** Nudges the loop and waits until `n` rows were published; the statements it ran meanwhile. */
  const relayed = async (n: number) => {
    record();
    relay.nudge();
    for (const until = Date.now() + 30_000; published.length < n;) {
      if (Date.now() > until) throw new Error(`${published.length} of ${n} published`);
      await new Promise((r) => setTimeout(r, 10));
    }
    await new Promise((r) => setTimeout(r, 50));
    return recorded();
  };
  try {
    install();
    relay.start();
    await db.knex('outbox').insert([row(0), row(1)]);
    expect(await relayed(2)).toHaveLength(1);
    // Published and still claimed: no relay takes them again, and the next claim marks them.
    expect(await unsent()).toEqual(['task-0', 'task-1']);
    await db.knex('outbox').insert([row(2)]);
    expect(await relayed(3)).toHaveLength(1);
    expect(await unsent()).toEqual(['task-2']);
    await relay.stop();
    expect(await unsent()).toEqual([]);
    expect(published).toEqual(['task-0', 'task-1', 'task-2']);
  } finally {
    await relay.stop();
    await db.close();
  }
});
