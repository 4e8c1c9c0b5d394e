import { Webhook } from 'standardwebhooks';
import { Receiver } from './webhook-receiver';
import { startWebhookHarness, waitFor, type WebhookHarness } from './webhook-harness';

let h: WebhookHarness;
let rx: Receiver;

beforeEach(async () => {
  h = await startWebhookHarness();
  rx = await new Receiver().start();
});
afterEach(async () => {
  await h.close();
  await rx.close();
});

async function register(types: string[] = ['vision.task.status_changed']) {
  const r = await h.api('POST', '/v1/vision/webhooks', { body: { url: rx.url, event_types: types } });
  expect(r.status).toBe(201);
  rx.secrets = [r.body.secret as string];
  return r.body as { endpoint_id: string; secret: string };
}

describe('webhook endpoints', () => {
  it('register after a signed verification event, show the secret once, list, rotate and delete', async () => {
    rx.secrets = [];
    const r = await h.api('POST', '/v1/vision/webhooks', {
      body: { url: rx.url, event_types: ['vision.task.status_changed'], description: 'ops' },
    });
    expect(r.status).toBe(201);
    expect(r.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(r.body).toMatchObject({ url: rx.url, status: 'enabled', description: 'ops' });
    // The verification request was signed with the new secret and carried a CloudEvent.
    expect(rx.received).toHaveLength(1);
    const v = rx.received[0];
    const event = new Webhook(r.body.secret as string).verify(
      v.body,
      v.headers as Record<string, string>,
    ) as {
      type: string;
      specversion: string;
      data: { endpoint_id: string };
    };
    expect(event).toMatchObject({ type: 'vision.webhook.verification', specversion: '1.0' });
    expect(event.data.endpoint_id).toBe(r.body.endpoint_id);
    expect(v.headers.traceparent).toBeUndefined();
    expect(v.headers.baggage).toBeUndefined();

    const id = r.body.endpoint_id as string;
    const list = await h.api('GET', '/v1/vision/webhooks');
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(1);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
    const one = await h.api('GET', `/v1/vision/webhooks/${id}`);
    expect(one.body.secret).toBeUndefined();
    // Another subject sees nothing.
    expect((await h.api('GET', `/v1/vision/webhooks/${id}`, { subject: 'bob' })).status).toBe(404);
    expect((await h.api('GET', '/v1/vision/webhooks', { subject: 'bob' })).body.items).toEqual([]);

    const rotated = await h.api('POST', `/v1/vision/webhooks/${id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(r.body.secret);
    expect(rotated.body.previous_secret_expires_at).toBeDefined();

    expect((await h.api('DELETE', `/v1/vision/webhooks/${id}`, { subject: 'bob' })).status).toBe(404);
    expect((await h.api('DELETE', `/v1/vision/webhooks/${id}`)).status).toBe(204);
    expect((await h.api('GET', `/v1/vision/webhooks/${id}`)).status).toBe(404);
  });

  it('refuse a receiver that does not answer the verification with 2xx, and store nothing', async () => {
    for (const answer of [
      { status: 500 },
      { status: 302, headers: { location: rx.url } },
      { status: 200, delayMs: 1500 },
    ]) {
      rx.answer = () => answer;
      const before = rx.received.length;
      const r = await h.api('POST', '/v1/vision/webhooks', {
        body: { url: rx.url, event_types: ['vision.quota.exhausted'] },
      });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({
        code: 'OP-TASK-REQUEST-INVALID',
        details: { reason: 'webhook_verification_failed' },
      });
      // A redirect is not followed: one request per registration.
      expect(rx.received.length).toBe(before + 1);
    }
    expect((await h.api('GET', '/v1/vision/webhooks')).body.items).toEqual([]);
  });

  it('refuse bodies that are not the register shape', async () => {
    const cases: [unknown, string][] = [
      [{ url: rx.url }, 'invalid_field'],
      [{ url: rx.url, event_types: [] }, 'invalid_field'],
      [{ url: rx.url, event_types: ['task.nope'] }, 'invalid_field'],
      [{ url: rx.url, event_types: ['vision.quota.exhausted', 'vision.quota.exhausted'] }, 'invalid_field'],
      [{ url: rx.url, event_types: ['vision.quota.exhausted'], extra: 1 }, 'unknown_field'],
      [{ url: rx.url, event_types: ['vision.quota.exhausted'], description: 'a\u0000b' }, 'invalid_field'],
      [{ url: rx.url, event_types: ['vision.quota.exhausted'], description: 'bell\u0007' }, 'invalid_field'],
      [{ url: 'ftp://example.com/x', event_types: ['vision.quota.exhausted'] }, 'webhook_url_invalid'],
      [{ url: 'http://u:p@127.0.0.1/x', event_types: ['vision.quota.exhausted'] }, 'webhook_url_invalid'],
      [{ url: 'not a url', event_types: ['vision.quota.exhausted'] }, 'webhook_url_invalid'],
      [['x'], 'malformed_body'],
    ];
    for (const [body, reason] of cases) {
      const r = await h.api('POST', '/v1/vision/webhooks', { body });
      expect([r.status, r.body.error.details.reason]).toEqual([400, reason]);
    }
    expect(rx.received).toHaveLength(0);
  });

  it('cap the endpoints of a subject', async () => {
    await h.close();
    h = await startWebhookHarness({ RESULTS_WEBHOOK_MAX_ENDPOINTS: '2' });
    for (let i = 0; i < 2; i++) await register();
    const r = await h.api('POST', '/v1/vision/webhooks', {
      body: { url: rx.url, event_types: ['vision.quota.exhausted'] },
    });
    expect([r.status, r.body.error.details.reason]).toEqual([400, 'too_many_webhooks']);
  });
});

describe('webhook deliveries', () => {
  it('sign each task status change as a CloudEvent, with reason and previous status, and log the attempt', async () => {
    const ep = await register();
    await h.taskEvent('t-1', 'running', { type: 'task.created' });
    await h.taskEvent('t-1', 'failed', { previous_status: 'running', reason: 'stream_lost' });
    await waitFor('two events', async () => rx.events().length === 2);
    const [created, failed] = rx.events();
    expect(created).toMatchObject({
      type: 'vision.task.status_changed',
      source: '/v1/vision/tasks/t-1',
      subject: 't-1',
      data: { task_id: 't-1', status: 'running', previous_status: 'submitting' },
    });
    expect(failed.data).toMatchObject({
      status: 'failed',
      previous_status: 'running',
      reason: 'stream_lost',
    });
    const r = rx.received.find((x) => x.id === failed.id)!;
    expect(r.headers['content-type']).toBe('application/cloudevents+json; charset=utf-8');
    for (const h of ['traceparent', 'tracestate', 'baggage']) expect(r.headers[h]).toBeUndefined();

    await waitFor('log', async () => {
      const log = await h.api('GET', `/v1/vision/webhooks/${ep.endpoint_id}/deliveries`);
      return (
        log.body.items.length === 2 &&
        log.body.items.every((d: { status: string }) => d.status === 'delivered')
      );
    });
    const log = await h.api('GET', `/v1/vision/webhooks/${ep.endpoint_id}/deliveries?limit=1`);
    expect(log.body.items[0]).toMatchObject({ delivery_id: failed.id, status: 'delivered', attempts: 1 });
    expect(log.body.items[0].attempt_log[0]).toMatchObject({
      attempt: 1,
      status_code: 204,
      outcome: 'delivered',
    });
    expect(typeof log.body.items[0].attempt_log[0].latency_ms).toBe('number');
    const next = await h.api(
      'GET',
      `/v1/vision/webhooks/${ep.endpoint_id}/deliveries?limit=1&cursor=${log.body.next_cursor}`,
    );
    expect(next.body.items[0].delivery_id).toBe(created.id);
    expect(next.body.next_cursor).toBe('');
    const one = await h.api('GET', `/v1/vision/webhooks/${ep.endpoint_id}/deliveries/${failed.id}`);
    expect(one.body.event).toMatchObject({ id: failed.id, type: 'vision.task.status_changed' });
    // Unsubscribed types and other subjects' events are not sent.
    await h.taskEvent('t-2', 'running', { subject: 'bob' });
    await h.taskEvent('i-1', 'succeeded', { kind: 'image', type: 'task.created' });
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.events()).toHaveLength(2);
  });

  it('deliver image call completions and quota exhaustion to endpoints subscribed to them', async () => {
    await register(['vision.image_detection.completed', 'vision.quota.exhausted']);
    await h.taskEvent('i-1', 'succeeded', {
      kind: 'image',
      type: 'task.created',
      request_id: '00000000-0000-4000-8000-000000000001',
      images: { total: 3, succeeded: 2, failed: 1 },
    });
    const { TOPICS } = await import('@vision/shared');
    await h.bus.publish(TOPICS.quotaEvents, [
      {
        key: 'alice',
        value: {
          schema: 1,
          event_id: 'q-1',
          type: 'charged',
          subject: 'alice',
          kind: 'video',
          units: 1,
          day: '2026-01-01',
          occurred_at: new Date().toISOString(),
        },
      },
      {
        key: 'alice',
        value: {
          schema: 1,
          event_id: 'q-2',
          type: 'exhausted',
          subject: 'alice',
          kind: 'video',
          day: '2026-01-01',
          limit: 5,
          used: 5,
          resets_at: '2026-01-01T16:00:00.000Z',
          occurred_at: new Date().toISOString(),
        },
      },
    ]);
    await waitFor('two events', async () => rx.events().length === 2);
    const types = rx
      .events()
      .map((e) => e.type)
      .sort();
    expect(types).toEqual(['vision.image_detection.completed', 'vision.quota.exhausted']);
    const img = rx.events().find((e) => e.type === 'vision.image_detection.completed')!;
    expect(img.data).toMatchObject({
      task_id: 'i-1',
      status: 'succeeded',
      images: { total: 3, succeeded: 2, failed: 1 },
    });
    const q = rx.events().find((e) => e.type === 'vision.quota.exhausted')!;
    expect(q.data).toEqual({
      kind: 'video',
      day: '2026-01-01',
      limit: 5,
      used: 5,
      resets_at: '2026-01-01T16:00:00.000Z',
    });
  });
});
