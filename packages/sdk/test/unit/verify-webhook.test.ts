import { Webhook } from 'standardwebhooks';
import { verifyWebhook } from '../../src/webhooks';

const A = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
const B = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;

function signed(secrets: string[], body: string, at = new Date()) {
  const id = 'evt-1';
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(id, at, body)).join(' '),
  };
}

describe('verifyWebhook', () => {
  const body = JSON.stringify({
    specversion: '1.0',
    id: 'evt-1',
    type: 'vision.quota.exhausted',
    data: { kind: 'video' },
  });

  it('returns the event of a body signed with the secret, from plain headers or a Headers object', () => {
    expect(verifyWebhook(A, body, signed([A], body)).data).toEqual({ kind: 'video' });
    expect(verifyWebhook(A, Buffer.from(body), new Headers(signed([A], body))).type).toBe(
      'vision.quota.exhausted',
    );
  });

  it('during a rotation either secret verifies the two signatures', () => {
    const h = signed([B, A], body);
    expect(verifyWebhook(A, body, h).id).toBe('evt-1');
    expect(verifyWebhook(B, body, h).id).toBe('evt-1');
  });

  it('throws on another secret, a changed body or a stale timestamp', () => {
    expect(() => verifyWebhook(B, body, signed([A], body))).toThrow();
    expect(() => verifyWebhook(A, `${body} `, signed([A], body))).toThrow();
    expect(() => verifyWebhook(A, body, signed([A], body, new Date(Date.now() - 10 * 60_000)))).toThrow();
  });
});
