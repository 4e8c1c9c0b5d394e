/**
 * Standard Webhooks signatures (the `standardwebhooks` library): `webhook-id`, `webhook-timestamp` (Unix
 * seconds) and `webhook-signature`, `v1,<base64 HMAC-SHA256 of id.timestamp.body>`, one per live secret,
 * space-separated, so that while a secret rotates a receiver holding either secret verifies.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` and 32 random bytes in base64 (the form receivers' libraries take). */
export function newSecret(bytes: Buffer = randomBytes(32)): string {
  return `${SECRET_PREFIX}${bytes.toString('base64')}`;
}

/** The `webhook-signature` value: one `v1,` signature per secret, current first. */
export function signatureHeader(secrets: readonly string[], id: string, at: Date, body: string): string {
  return secrets.map((s) => new Webhook(s).sign(id, at, body)).join(' ');
}

/** The headers of one delivery attempt (a fresh timestamp each attempt; the same id on every attempt). */
export function deliveryHeaders(
  secrets: readonly string[],
  id: string,
  at: Date,
  body: string,
): Record<string, string> {
  return {
    'content-type': 'application/cloudevents+json; charset=utf-8',
    'user-agent': 'vision-webhooks/1',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatureHeader(secrets, id, at, body),
  };
}

/**
 * Seals signing secrets for the database (AES-256-GCM under a key derived from the configured one), so a
 * copy of the table alone signs nothing. Form: `v1.<iv>.<ciphertext>.<tag>`, base64url parts.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(sealKey: string) {
    if (sealKey.length < 16) throw new Error('webhook seal key must have at least 16 characters');
    this.key = createHmac('sha256', sealKey).update('vision.results.webhook-secret.v1').digest();
  }

  seal(secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return ['v1', iv, ct, cipher.getAuthTag()]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  /** The secret, or undefined when the value was sealed under another key or is damaged. Never throws. */
  open(sealed: string): string | undefined {
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== 'v1') return undefined;
    try {
      const [iv, ct, tag] = parts.slice(1).map((p) => Buffer.from(p, 'base64url'));
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(ct), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}
