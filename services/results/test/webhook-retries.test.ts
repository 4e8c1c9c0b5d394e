import { TOPICS } from '@vision/shared';
import { frameMessage } from './helpers';
import { Receiver } from './webhook-receiver';
import { startWebhookHarness, waitFor, type WebhookHarness } from './webhook-harness';
import { WebhookDeliveriesStore } from '../src/store/webhook-deliveries-store';

let h: WebhookHarness;
let rx: Receiver;

afterEach(async () => {
  await h?.close();
  await rx?.close();
});

async function setUp(env: Record<string, string> = {}, types = ['vision.task.status_changed']) {
  h = await startWebhookHarness(env);
  rx = await new Receiver().start();
  const r = await h.api('POST', '/v1/vision/webhooks', { body: { url: rx.url, event_types: types } });
  expect(r.status).toBe(201);
  rx.secrets = [r.body.secret as string];
  return r.body.endpoint_id as string;
}

const LIFECYCLES: Record<string, string[]> = {
  'task-a': ['running', 'stopping', 'stopped'],
  'task-b': ['resolving', 'running', 'succeeded'],
  'task-c': ['refunded'],
  'task-d': ['running', 'failed'],
};

async function publishLifecycles() {
  const ids: string[] = [];
  const rounds = Math.max(...Object.values(LIFECYCLES).map((l) => l.length));
  for (let i = 0; i < rounds; i++)
    for (const [task, states] of Object.entries(LIFECYCLES))
      if (states[i]) ids.push(await h.taskEvent(task, states[i], i === 0 ? { type: 'task.created' } : {}));
  return ids;
}

describe('webhook retries', () => {
  it('a receiver down then back gets every event, each webhook-id once after dedup, in order per task', async () => {
    await setUp();
    // Down: every request fails for a while (503 without Retry-After, then connection-level failures).
    let down = true;
    rx.answer = () => (down ? { status: 503 } : { status: 200 });
    const ids = await publishLifecycles();
    await waitFor('several failed attempts', async () => rx.received.length >= 12);
    down = false;
    await waitFor('every event', async () => rx.events().length === ids.length, 30_000);
    const events = rx.events();
    expect(new Set(events.map((e) => e.id))).toEqual(new Set(ids));
    // Same webhook-id on every attempt of one event.
    for (const r of rx.received.filter((x) => x.verified && x.event?.type !== 'vision.webhook.verification'))
      expect(ids).toContain(r.id);
    for (const [task, states] of Object.entries(LIFECYCLES))
      expect(events.filter((e) => e.subject === task).map((e) => e.data.status)).toEqual(states);
  }, 60_000);

  it('a 410 disables the endpoint; its pending deliveries end dead and nothing more is sent', async () => {
    const ep = await setUp();
    rx.answer = () => ({ status: 410 });
    await h.taskEvent('t-1', 'running', { type: 'task.created' });
    await waitFor(
      'disabled',
      async () => (await h.api('GET', `/v1/vision/webhooks/${ep}`)).body.status === 'disabled',
    );
    const e = await h.api('GET', `/v1/vision/webhooks/${ep}`);
    expect(e.body.disabled_reason).toBe('gone');
    const sent = rx.received.length;
    await h.taskEvent('t-1', 'stopped');
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.received.length).toBe(sent);
    const dead = await h.api('GET', `/v1/vision/webhooks/${ep}/deliveries?status=dead`);
    expect(dead.body.items[0]).toMatchObject({ status: 'dead', last_status_code: 410, last_outcome: 'gone' });
    const again = await h.api(
      'POST',
      `/v1/vision/webhooks/${ep}/deliveries/${dead.body.items[0].delivery_id}/redeliver`,
    );
    expect([again.status, again.body.error.details.reason]).toEqual([400, 'webhook_disabled']);
  });

  it('an attempt that comes back after its endpoint was deleted records nothing and does not throw', async () => {
    const ep = await setUp();
    rx.answer = () => ({ status: 500 });
    const id = await h.taskEvent('t-1', 'running', { type: 'task.created' });
    await waitFor('a failed attempt', async () => rx.received.some((r) => r.id === id));
    const store = new WebhookDeliveriesStore(h.svc.db.knex);
    const delivery = await store.get(ep, id);
    if (!delivery) throw new Error('the delivery was not stored');
    expect(await h.api('DELETE', `/v1/vision/webhooks/${ep}`)).toMatchObject({ status: 204 });
    // What the dispatcher does when an attempt that was in flight during the delete comes back.
    const recorded = await store.complete(
      {
        endpoint_id: ep,
        delivery_id: id,
        attempt: delivery.attempts + 1,
        started_at: new Date(),
        duration_ms: 5,
        status_code: 500,
        outcome: 'http_error',
      },
      { status: 'pending', at: new Date() },
      new Date(),
    );
    expect(recorded).toBe(false);
    const left = await h.svc.db.knex('webhook_attempts').where({ endpoint_id: ep }).count({ n: '*' });
    expect(Number(left[0].n)).toBe(0);
  });

  it('a 429 with Retry-After is retried no sooner than it asks', async () => {
    const ep = await setUp();
    let first = true;
    rx.answer = () => {
      if (!first) return { status: 200 };
      first = false;
      return { status: 429, headers: { 'retry-after': '2' } };
    };
    await h.taskEvent('t-1', 'running', { type: 'task.created' });
    await waitFor('delivered', async () => rx.events().length === 1 && rx.received.length === 3, 10_000);
    const [, a, b] = rx.received;
    expect(b.at - a.at).toBeGreaterThanOrEqual(1900);
    await waitFor('recorded', async () => {
      const l = await h.api('GET', `/v1/vision/webhooks/${ep}/deliveries`);
      return l.body.items[0]?.status === 'delivered';
    });
    const log = await h.api('GET', `/v1/vision/webhooks/${ep}/deliveries`);
    expect(log.body.items[0].attempt_log.map((x: { outcome: string }) => x.outcome)).toEqual([
      'rate_limited',
      'delivered',
    ]);
  });

  it('a receiver slower than the deadline fails the attempt (timeout), which is retried', async () => {
    // The harness's deadline (1 s) bounds the registration's verification too: a shorter one fails that on a busy
    // machine, before any delivery is tried.
    const ep = await setUp();
    let slow = true;
    rx.answer = () => (slow ? { status: 200, delayMs: 3000 } : { status: 200 });
    await h.taskEvent('t-1', 'running', { type: 'task.created' });
    await waitFor('a timed-out attempt', async () => rx.received.length >= 2);
    slow = false;
    await waitFor('delivered', async () => {
      const log = await h.api('GET', `/v1/vision/webhooks/${ep}/deliveries`);
      return log.body.items[0]?.status === 'delivered';
    });
    const log = await h.api('GET', `/v1/vision/webhooks/${ep}/deliveries`);
    const outcomes = log.body.items[0].attempt_log.map((x: { outcome: string }) => x.outcome);
    expect(outcomes[0]).toBe('timeout');
    expect(outcomes[outcomes.length - 1]).toBe('delivered');
  });

  it('past the retry horizon a delivery is dead and listed; redelivered by id it arrives with the same webhook-id', async () => {
    const ep = await setUp({ RESULTS_WEBHOOK_RETRY_HORIZON_MS: '1000' });
    let down = true;
    rx.answer = () => (down ? { status: 500 } : { status: 200 });
    const id = await h.taskEvent('t-1', 'running', { type: 'task.created' });
    await waitFor(
      'dead',
      async () =>
        (await h.api('GET', `/v1/vision/webhooks/${ep}/deliveries?status=dead`)).body.items.length === 1,
    );
    const dead = (await h.api('GET', `/v1/vision/webhooks/${ep}/deliveries/${id}`)).body;
    expect(dead).toMatchObject({ delivery_id: id, status: 'dead', last_status_code: 500 });
    expect(dead.attempts).toBeGreaterThan(1);
    expect(dead.next_attempt_at).toBeUndefined();
    down = false;
    const again = await h.api('POST', `/v1/vision/webhooks/${ep}/deliveries/${id}/redeliver`);
    expect(again.status).toBe(202);
    await waitFor('delivered', async () => rx.events().length === 1);
    expect(rx.events()[0].id).toBe(id);
    await waitFor('recorded', async () => {
      const d = await h.api('GET', `/v1/vision/webhooks/${ep}/deliveries/${id}`);
      return d.body.status === 'delivered';
    });
    const twice = await h.api('POST', `/v1/vision/webhooks/${ep}/deliveries/${id}/redeliver`);
    expect([twice.status, twice.body.error.details.reason]).toEqual([400, 'delivery_not_dead']);
  });

  it('a secret rotated during traffic: every delivery verifies with either secret until the overlap ends', async () => {
    const ep = await setUp();
    const oldSecret = rx.secrets[0];
    const sent: string[] = [];
    let rotated: string | undefined;
    for (let i = 0; i < 30; i++) {
      sent.push(await h.taskEvent(`t-${i}`, 'running', { type: 'task.created' }));
      if (i === 10) {
        const r = await h.api('POST', `/v1/vision/webhooks/${ep}/rotate-secret`);
        rotated = r.body.secret as string;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    await waitFor('all', async () => rx.events().length === sent.length);
    const { Webhook } = await import('standardwebhooks');
    const after = rx.received.filter(
      (r) => (r.headers['webhook-signature'] as string).split(' ').length === 2,
    );
    expect(after.length).toBeGreaterThan(0);
    for (const r of after) {
      const headers = r.headers as Record<string, string>;
      expect(() => new Webhook(oldSecret).verify(r.body, headers)).not.toThrow();
      expect(() => new Webhook(rotated!).verify(r.body, headers)).not.toThrow();
    }
  });

  it('announces new frames of a running task at most once per interval, with the cursors to read them', async () => {
    await setUp({ RESULTS_WEBHOOK_FRAMES_INTERVAL_MS: '500' }, ['vision.task.frames_available']);
    await h.taskEvent('v-1', 'running', { type: 'task.created' });
    const publish = async (from: number, to: number) => {
      const msgs = [];
      for (let s = from; s < to; s++) msgs.push(frameMessage('v-1', s, [{ label: 'person', score: 0.9 }]));
      await h.bus.publish(TOPICS.frames, msgs);
    };
    await publish(0, 5);
    await waitFor('first announcement', async () => rx.events().length === 1);
    for (let i = 0; i < 10; i++) {
      await publish(5 + i, 6 + i);
      await new Promise((r) => setTimeout(r, 100));
    }
    await waitFor(
      'frames up to 15 announced',
      async () => rx.events().some((e) => e.data.frames_stored === 15),
      10_000,
    );
    const events = rx.events();
    for (let i = 1; i < events.length; i++)
      expect(
        Date.parse((events[i] as unknown as { time: string }).time) -
          Date.parse((events[i - 1] as unknown as { time: string }).time),
      ).toBeGreaterThanOrEqual(500);
    expect(events[0].data).toMatchObject({ task_id: 'v-1', cursor: '', new_frames: 5, frames_stored: 5 });
    expect(JSON.stringify(events)).not.toContain('objects');
    // The cursors read exactly the announced frames.
    const { IDENTITY_HEADER } = await import('@vision/shared');
    const { signFor } = await import('../../../test/helpers/identity');
    const second = events[1].data as { cursor: string; next_cursor: string; new_frames: number };
    const target = `/v1/vision/tasks/v-1/results?cursor=${second.cursor}&limit=500`;
    const res = await fetch(`${h.svc.url}${target}`, {
      headers: {
        [IDENTITY_HEADER]: signFor({ subject: 'alice', requestId: 'r' }, 'results', {
          method: 'GET',
          target,
        }),
      },
    });
    const page = (await res.json()) as { items: { frame_id: string }[] };
    expect(page.items.slice(0, second.new_frames).map((f) => f.frame_id)[0]).toBe('v-1-f5');
    // A task that is no longer running is not announced.
    await h.taskEvent('v-1', 'succeeded');
    await new Promise((r) => setTimeout(r, 700));
    const count = rx.events().length;
    await publish(20, 25);
    await new Promise((r) => setTimeout(r, 1200));
    expect(rx.events().length).toBe(count);
  });
});
