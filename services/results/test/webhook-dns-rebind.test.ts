import { streamResolver } from '@vision/shared';
import { newSecret, webhookSecretBox } from '../src/domain/webhooks/signing';
import { sendAttempt } from '../src/use-cases/webhooks/send-attempt';
import { startWebhookHarness, waitFor, type WebhookHarness } from './webhook-harness';
import {
  type ConnectionCounter,
  type RebindingDns,
  startConnectionCounter,
  startRebindingDns,
} from '../../../test/helpers/rebinding-dns';

/**
 * DNS rebinding against webhook deliveries, private networks not allowed: the name server answers a
 * public address first and 127.0.0.1 after, and the system resolver knows the receiver's name
 * (`localhost`) as loopback. A delivery connects only to the address that was checked, so no
 * connection ever reaches the loopback listener: not from one attempt, a registration's verification
 * event, or the dispatcher with its retries.
 */
const PUBLIC = '93.184.216.34';
const SEAL_KEY = 'rebinding-test-seal-key';
let dns: RebindingDns;
let listener: ConnectionCounter;
let h: WebhookHarness | undefined;
beforeAll(async () => {
  listener = await startConnectionCounter();
});
afterEach(async () => {
  await h?.close();
  h = undefined;
  await dns?.close();
});
afterAll(async () => {
  await listener.close();
});

const hookUrl = () => `http://localhost:${listener.port}/hook`;

test('one attempt resolves the receiver once and connects only to the checked public address', async () => {
  dns = await startRebindingDns(PUBLIC, '127.0.0.1');
  const before = listener.connections();
  const sent = await sendAttempt(hookUrl(), { 'content-type': 'application/json' }, '{"type":"x"}', {
    allowPrivate: false,
    resolve: streamResolver({ servers: [dns.server], timeoutMs: 1000 }),
    timeoutMs: 1500,
  });
  expect(dns.questions()).toBe(1);
  expect(['unreachable', 'timeout']).toContain(sent.outcome);
  expect(sent.statusCode).toBeUndefined();
  expect(listener.connections() - before).toBe(0);
});

test('the verification delivery of a registration never reaches the loopback listener', async () => {
  // The registration's check hears the public address; the verification attempt's own check 127.0.0.1.
  dns = await startRebindingDns(PUBLIC, '127.0.0.1');
  h = await startWebhookHarness({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false', STREAM_DNS_SERVERS: dns.server });
  const before = listener.connections();
  const r = await h.api('POST', '/v1/vision/webhooks', {
    body: { url: hookUrl(), event_types: ['vision.task.status_changed'] },
  });
  expect([r.status, r.body.error.details.reason]).toEqual([400, 'webhook_verification_failed']);
  expect(dns.questions()).toBe(2);
  expect(listener.connections() - before).toBe(0);
}, 30_000);

test('the dispatcher delivering and retrying an event never reaches the loopback listener', async () => {
  // The first attempt hears the public address; every later question hears 127.0.0.1.
  dns = await startRebindingDns(PUBLIC, '127.0.0.1');
  h = await startWebhookHarness({
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false',
    STREAM_DNS_SERVERS: dns.server,
    RESULTS_WEBHOOK_SECRET_KEY: SEAL_KEY,
  });
  // Stored as a registration would store it: a registration needs a receiver that answers, and the only
  // one here is the loopback listener.
  const now = new Date();
  const ep = 'ep_00000000000000000000000000000001';
  const stored = await h.svc.webhooks.endpoints.insertWithin(
    {
      endpoint_id: ep,
      subject: 'alice',
      url: hookUrl(),
      event_types: ['vision.task.status_changed'],
      description: null,
      secret_sealed: webhookSecretBox(SEAL_KEY).seal(newSecret()),
      enabled: true,
      created_at: now,
      updated_at: now,
    },
    10,
  );
  expect(stored).toBe(true);
  const before = listener.connections();
  await h.taskEvent('t-1', 'running', { type: 'task.created' });
  let outcomes: string[] = [];
  await waitFor(
    'a pinned attempt and a refused one',
    async () => {
      const log = await h!.api('GET', `/v1/vision/webhooks/${ep}/deliveries`);
      const attempts: { outcome: string }[] = log.body.items[0]?.attempt_log ?? [];
      outcomes = attempts.map((a) => a.outcome);
      return outcomes.length >= 2;
    },
    15_000,
  );
  expect(['unreachable', 'timeout']).toContain(outcomes[0]);
  expect(outcomes[1]).toBe('refused_address');
  expect(listener.connections() - before).toBe(0);
}, 30_000);
