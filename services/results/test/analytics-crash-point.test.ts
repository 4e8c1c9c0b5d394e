/**
 * The database goes away at the worst moment of an evaluation: right after the transaction of a step that decided
 * events has committed. Every later statement fails (as when the process dies there) until the database is back;
 * then the bus delivers the failed batch again. No event may be lost: whatever a step decided is in the step's
 * transaction (events, annotations, snapshot), so the stored events still equal a replay of the same rules. A kill
 * on real Kafka and Postgres (test/distributed/results-killed-analytics.test.ts) lands in this window only by luck.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from '@vision/shared';
import { TOPICS } from '@vision/shared';
import { endMessage, risingCarFrame } from './helpers';
import { startWebhookHarness, waitFor, type WebhookHarness } from './webhook-harness';

let h: WebhookHarness;

beforeAll(async () => {
  h = await startWebhookHarness({ RESULTS_STREAM_POLL_MS: '20' });
});
afterAll(async () => {
  await h.close();
});

const RULES = {
  zones: [
    {
      id: 'upper',
      polygon: [
        [0.2, 0.1],
        [0.8, 0.1],
        [0.8, 0.4],
        [0.2, 0.4],
      ],
      labels: ['car'],
    },
  ],
  lines: [{ id: 'gate', start: [0.1, 0.5], end: [0.9, 0.5], labels: ['car'] }],
};

/**
 * Arms the outage: after the first committed transaction that advanced a task's analytics (`analytics_tasks`),
 * every statement outside a transaction and every new connection fail until `end()`.
 */
function outageAfterStepCommit(knex: Knex) {
  type Client = { query: (...a: unknown[]) => Promise<unknown>; acquireConnection: () => Promise<unknown> };
  const client = knex.client as unknown as Client;
  const { query, acquireConnection } = client;
  type Begin = (container: unknown, config: unknown, outer: unknown) => PromiseLike<unknown>;
  const context = (knex as unknown as { context: { _transaction: Begin } }).context;
  const begin = context._transaction;
  let down = false;
  let failures = 0;
  const fail = () => {
    failures++;
    return Promise.reject(new Error('the database went away'));
  };
  client.query = (...a) => (down ? fail() : query.apply(client, a));
  client.acquireConnection = () => (down ? fail() : acquireConnection.apply(client));
  context._transaction = function (this: unknown, container, config, outer) {
    if (typeof container !== 'function') return begin.call(this, container, config, outer);
    let step = false;
    const watched = (trx: (...a: unknown[]) => unknown) =>
      (container as (t: unknown) => unknown)(
        new Proxy(trx, {
          apply(target, self, args: unknown[]) {
            if (args[0] === 'analytics_tasks') step = true;
            return Reflect.apply(target, self, args) as unknown;
          },
        }),
      );
    return Promise.resolve(begin.call(this, watched, config, outer)).then((v) => {
      if (step) down = true;
      return v;
    });
  };
  return {
    get failures() {
      return failures;
    },
    get down() {
      return down;
    },
    end() {
      context._transaction = begin;
      client.query = query;
      client.acquireConnection = acquireConnection;
      down = false;
    },
  };
}

describe('the database lost right after a step that decided events', () => {
  it('loses no event: the stored events equal a replay of the same rules', async () => {
    const taskId = randomUUID();
    await h.taskEvent(taskId, 'running', { type: 'task.created', rules_version: 1, rules: RULES });
    await waitFor('the rules known', async () => {
      const a = await h.api('GET', `/v1/vision/tasks/${taskId}/analytics`);
      return a.status === 200 && a.body.rules_version === 1;
    });
    // Frames 0-4 evaluated (no event yet); the next step is frame 5 alone, which decides a crossing.
    await h.bus.publish(
      TOPICS.frames,
      Array.from({ length: 5 }, (_, i) => risingCarFrame(taskId, i)),
    );
    await waitFor(
      'frames 0-4 evaluated',
      async () => (await h.api('GET', `/v1/vision/tasks/${taskId}/analytics`)).body.as_of_seq === 4,
    );
    const outage = outageAfterStepCommit(h.svc.db.knex);
    try {
      await h.bus.publish(TOPICS.frames, [risingCarFrame(taskId, 5)]);
      await waitFor('the outage', async () => outage.down);
      // What comes next finds the database gone: the frames and the end marker cannot be stored.
      await h.bus.publish(TOPICS.frames, [
        ...Array.from({ length: 6 }, (_, i) => risingCarFrame(taskId, 6 + i)),
        endMessage(taskId, 12),
      ]);
      await waitFor('a statement refused', async () => outage.failures > 0);
    } finally {
      outage.end();
    }
    await h.taskEvent(taskId, 'succeeded', { rules_version: 1, rules: RULES });
    let stored: unknown[] = [];
    await waitFor('every event', async () => {
      const r = await h.api('GET', `/v1/vision/tasks/${taskId}/events?limit=100`);
      stored = r.body.items as unknown[];
      return r.body.next_cursor === '';
    });
    const replay = await h.api('POST', `/v1/vision/tasks/${taskId}/analytics/replay`, { body: RULES });
    expect(replay.body.events_total).toBe(3);
    expect(stored.map((e) => JSON.stringify(e))).toEqual(
      (replay.body.events as unknown[]).map((e) => JSON.stringify(e)),
    );
    expect((await h.api('GET', `/v1/vision/tasks/${taskId}/analytics`)).body).toEqual(replay.body.analytics);
  });
});
