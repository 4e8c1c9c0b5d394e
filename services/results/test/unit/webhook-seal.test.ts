import { createCipheriv, createHmac, randomBytes } from 'node:crypto';
import { SecretBox, isSealed } from '@vision/shared';
import { newSecret, webhookSecretBox } from '../../src/domain/webhooks/signing';

const KEY = 'results-seal-key-0123456789';

/** A secret sealed the way the results service sealed it before the box moved to @vision/shared. */
function sealedBefore(secret: string): string {
  const key = createHmac('sha256', KEY).update('vision.results.webhook-secret.v1').digest();
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ct = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return ['v1', iv, ct, cipher.getAuthTag()]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

test('webhook secrets sealed before still open; another purpose or key opens nothing', () => {
  const secret = newSecret();
  const box = webhookSecretBox(KEY);
  expect(box.open(sealedBefore(secret))).toBe(secret);
  const sealed = box.seal(secret);
  expect(isSealed(sealed)).toBe(true);
  expect(sealed).not.toContain(secret.slice(6));
  expect(box.open(sealed)).toBe(secret);
  expect(new SecretBox(KEY, 'vision.tasks.stream-url.v1').open(sealed)).toBeUndefined();
  expect(webhookSecretBox(`${KEY}x`).open(sealed)).toBeUndefined();
  expect(box.open('rtsp://cam/x')).toBeUndefined();
  expect(isSealed('rtsp://cam/x')).toBe(false);
  expect(() => webhookSecretBox('short')).toThrow('webhook seal key must have at least 16 characters');
});
