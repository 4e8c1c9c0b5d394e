/**
 * Standard Webhooks signatures (the `standardwebhooks` library): `webhook-id`, `webhook-timestamp` (Unix
 * seconds) and `webhook-signature`, `v1,<base64 HMAC-SHA256 of id.timestamp.body>`, one per live secret,
 * space-separated, so that while a secret rotates a receiver holding either secret verifies.
 */
import { randomBytes } from 'node:crypto';
import { SecretBox } from '@vision/shared';
import { Webhook } from 'standardwebhooks';

export type { SecretBox };

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

/** Seals signing secrets for the database (the shared SecretBox under the webhook purpose). */
export function webhookSecretBox(sealKey: string): SecretBox {
  return new SecretBox(sealKey, 'vision.results.webhook-secret.v1', 'webhook seal key');
}
