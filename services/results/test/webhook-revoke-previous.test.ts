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

const verifies = (secret: string, r: { body: string; headers: Record<string, unknown> }) => {
  try {
    new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};

test('revoke-previous-secret ends the overlap of a rotation at once: deliveries carry the new signature only', async () => {
  const r = await h.api('POST', '/v1/vision/webhooks', {
    body: { url: rx.url, event_types: ['vision.task.status_changed'] },
  });
  expect(r.status).toBe(201);
  const id = r.body.endpoint_id as string;
  const oldSecret = r.body.secret as string;
  const rotated = await h.api('POST', `/v1/vision/webhooks/${id}/rotate-secret`);
  const newSecret = rotated.body.secret as string;
  rx.secrets = [oldSecret, newSecret];
  expect(rotated.body.previous_secret_expires_at).toBeDefined();

  // During the overlap a delivery carries both signatures.
  await h.taskEvent('t-1', 'running', { type: 'task.created' });
  await waitFor('first delivery', async () => rx.events().length === 1);
  const during = rx.received[rx.received.length - 1];
  expect([verifies(oldSecret, during), verifies(newSecret, during)]).toEqual([true, true]);

  const revoked = await h.api('POST', `/v1/vision/webhooks/${id}/revoke-previous-secret`);
  expect(revoked.status).toBe(200);
  expect(revoked.body).toMatchObject({ endpoint_id: id, status: 'enabled' });
  expect(revoked.body.previous_secret_expires_at).toBeUndefined();
  expect(revoked.body.secret).toBeUndefined();
  const shown = await h.api('GET', `/v1/vision/webhooks/${id}`);
  expect(shown.body.previous_secret_expires_at).toBeUndefined();

  await h.taskEvent('t-2', 'running', { type: 'task.created' });
  await waitFor('second delivery', async () => rx.events().length === 2);
  const after = rx.received[rx.received.length - 1];
  expect((after.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
  expect([verifies(oldSecret, after), verifies(newSecret, after)]).toEqual([false, true]);

  // Again, with nothing left to revoke: the same answer. Another subject's or an impossible id: 404.
  expect((await h.api('POST', `/v1/vision/webhooks/${id}/revoke-previous-secret`)).status).toBe(200);
  const other = await h.api('POST', `/v1/vision/webhooks/${id}/revoke-previous-secret`, { subject: 'bob' });
  expect(other.status).toBe(404);
  expect(other.body.error.code).toBe('OP-NOT-FOUND');
  expect((await h.api('POST', '/v1/vision/webhooks/nope/revoke-previous-secret')).status).toBe(404);
});
