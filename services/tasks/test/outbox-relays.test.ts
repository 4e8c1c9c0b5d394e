/**
 * Two tasks outbox relays over one database (two replicas of the chart) publish each row exactly
 * once: a relay claims its batch, so the other skips it while it is being published.
 */
import { createLogger, FakeClock, openDb } from '@vision/shared';
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
