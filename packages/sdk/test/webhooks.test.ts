/**
 * `client.webhooks.*` against the standalone stack, with a receiver on loopback: an endpoint is registered
 * (its secret shown once and checked by the verification event), read back without a secret, its image-call
 * event refused until the delivery is dead, the secret rotated, the dead delivery redelivered and checked with
 * `verifyWebhook()` under both live secrets, and the endpoint deleted.
 */
import path from 'node:path';
import { VisionApiError, VisionClient, verifyWebhook, type WebhookDelivery } from '@vision/sdk';
import type { Receiver, Received } from '../../../services/results/test/webhook-receiver';
import { MEDIA, type TestStack } from '../../../test/helpers/stack';
import { DEAD_IN_TWO_SECONDS, startWebhookStack, until } from '../../../test/helpers/webhooks';

const KEY = 'sdk-webhooks-key-0123456789';
const IMAGE = path.join(MEDIA, 'images', 'street_people_car_coco9891.jpg');

describe('client.webhooks against the standalone stack', () => {
  let stack: TestStack;
  let rx: Receiver;
  let client: VisionClient;
  /** While true the receiver refuses every event (500) but still accepts the registration's verification. */
  let refusing = true;

  beforeAll(async () => {
    ({ stack, rx } = await startWebhookStack({
      keys: `${KEY}:sdk-hooked`,
      env: DEAD_IN_TWO_SECONDS,
      answer: (r: Received) =>
        refusing && !r.body.includes('"vision.webhook.verification"') ? { status: 500 } : { status: 204 },
    }));
    client = new VisionClient({ baseUrl: stack.url, apiKey: KEY });
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
    await rx?.close();
  });

  it('create, list, get, deliveries, rotateSecret, redeliver (verified), delivery and delete', async () => {
    const created = await client.webhooks.create({
      url: rx.url,
      event_types: ['vision.image_detection.completed'],
      description: 'sdk test',
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    expect(created).toMatchObject({ url: rx.url, status: 'enabled', description: 'sdk test' });
    const id = created.endpoint_id;
    // The verification event reached the receiver before the answer, signed with the secret shown once.
    const check = verifyWebhook<{ endpoint_id: string }>(
      created.secret,
      rx.received[0].body,
      rx.received[0].headers,
    );
    expect([check.type, check.data.endpoint_id]).toEqual(['vision.webhook.verification', id]);

    const listed = await client.webhooks.list();
    expect(listed.map((e) => e.endpoint_id)).toEqual([id]);
    const got = await client.webhooks.get(id);
    expect(got).toMatchObject({ endpoint_id: id, event_types: ['vision.image_detection.completed'] });
    for (const e of [...listed, got]) expect(JSON.stringify(e)).not.toContain(created.secret);
    expect(got).not.toHaveProperty('secret');

    const detection = await client.detectImages([IMAGE], { scene: 'person_vehicle' });
    const dead = await until('the refused delivery to be dead', async () => {
      const page = await client.webhooks.deliveries(id, { status: 'dead' });
      return page.items[0];
    });
    expect(dead.event_type).toBe('vision.image_detection.completed');
    expect(dead.attempts).toBeGreaterThanOrEqual(2);
    const all = await client.webhooks.deliveries(id, { limit: 10 });
    expect([all.items.map((d) => d.delivery_id), all.next_cursor]).toEqual([[dead.delivery_id], '']);
    const one = await client.webhooks.delivery(id, dead.delivery_id);
    expect(one.attempt_log.length).toBe(one.attempts);
    expect(one.attempt_log.every((a) => a.outcome === 'http_error' && a.status_code === 500)).toBe(true);
    expect(one.event).toMatchObject({ id: dead.delivery_id, subject: detection.task_id });

    const rotated = await client.webhooks.rotateSecret(id);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    expect(Date.parse(rotated.previous_secret_expires_at ?? '')).toBeGreaterThan(Date.now());

    refusing = false;
    const since = rx.received.length;
    const again = await client.webhooks.redeliver(id, dead.delivery_id);
    expect([again.delivery_id, again.status]).toEqual([dead.delivery_id, 'pending']);
    const sent = await until('the redelivery', () =>
      rx.received.slice(since).find((r) => r.headers['webhook-id'] === dead.delivery_id),
    );
    // Two signatures while the secret rotates: the new secret and the old one both verify.
    for (const secret of [rotated.secret, created.secret]) {
      const event = verifyWebhook<{ task_id: string; status: string }>(secret, sent.body, sent.headers);
      expect([event.id, event.type, event.data.task_id]).toEqual([
        dead.delivery_id,
        'vision.image_detection.completed',
        detection.task_id,
      ]);
    }
    expect(() => verifyWebhook(rotated.secret, `${sent.body} `, sent.headers)).toThrow();
    const delivered = await until('the delivery to be delivered', async () => {
      const d: WebhookDelivery = await client.webhooks.delivery(id, dead.delivery_id);
      return d.status === 'delivered' ? d : undefined;
    });
    expect(delivered.attempt_log[delivered.attempt_log.length - 1]).toMatchObject({
      outcome: 'delivered',
      status_code: 204,
    });
    const twice = await client.webhooks.redeliver(id, dead.delivery_id).catch((e: unknown) => e);
    expect(twice).toBeInstanceOf(VisionApiError);
    expect((twice as VisionApiError).reason).toBe('delivery_not_dead');

    await client.webhooks.delete(id);
    expect(await client.webhooks.list()).toEqual([]);
    const gone = await client.webhooks.get(id).catch((e: unknown) => e);
    expect([(gone as VisionApiError).status, (gone as VisionApiError).code]).toEqual([404, 'OP-NOT-FOUND']);
  }, 120_000);
});
