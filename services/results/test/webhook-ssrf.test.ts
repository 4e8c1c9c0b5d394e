/**
 * Registration against the egress policy of stream URLs, with private networks not allowed: every URL that
 * names or resolves to loopback, private, link-local, unspecified, multicast, reserved or cloud metadata
 * addresses is refused before any connection, and nothing is stored.
 */
import { startWebhookHarness, type WebhookHarness } from './webhook-harness';

let h: WebhookHarness;
beforeAll(async () => {
  h = await startWebhookHarness({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
});
afterAll(async () => {
  await h?.close();
});

const REFUSED = [
  'http://127.0.0.1/hook',
  'http://127.1/hook',
  'http://2130706433/hook',
  'http://0x7f000001/hook',
  'http://017700000001/hook',
  'http://localhost/hook',
  'http://[::1]/hook',
  'http://[::ffff:127.0.0.1]/hook',
  'http://[::ffff:7f00:1]/hook',
  'http://0.0.0.0/hook',
  'http://[::]/hook',
  'http://10.0.0.1/hook',
  'http://172.16.5.4/hook',
  'http://192.168.1.1/hook',
  'http://100.64.0.1/hook',
  'http://169.254.169.254/latest/meta-data',
  'http://[fd00:ec2::254]/',
  'http://100.100.100.200/',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://[2002:c0a8:0101::1]/',
  'http://[fe80::1]/',
  'http://224.0.0.1/',
  'http://255.255.255.255/',
  'https://192.0.2.10/',
];

test.each(REFUSED)('refuses %s', async (url) => {
  const r = await h.api('POST', '/v1/vision/webhooks', {
    body: { url, event_types: ['vision.quota.exhausted'] },
  });
  expect([r.status, r.body.error.code, r.body.error.details.reason]).toEqual([
    400,
    'OP-TASK-REQUEST-INVALID',
    'webhook_url_invalid',
  ]);
});

test('refuses schemes other than http(s), user information and fragments', async () => {
  for (const url of [
    'file:///etc/passwd',
    'gopher://127.0.0.1/',
    'ftp://example.com/',
    'http://a:b@example.com/',
    'https://example.com/#x',
    'javascript:alert(1)',
  ]) {
    const r = await h.api('POST', '/v1/vision/webhooks', {
      body: { url, event_types: ['vision.quota.exhausted'] },
    });
    expect([url, r.status, r.body.error.details.reason]).toEqual([url, 400, 'webhook_url_invalid']);
  }
  expect((await h.api('GET', '/v1/vision/webhooks')).body.items).toEqual([]);
});
