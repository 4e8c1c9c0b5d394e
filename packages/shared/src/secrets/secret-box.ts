/**
 * Seals secrets for a database column (AES-256-GCM under a key derived from the configured one and a
 * purpose label), so that a copy of the table alone reveals nothing. Form: `v1.<iv>.<ciphertext>.<tag>`,
 * base64url parts. One mechanism for every sealed column: results' webhook signing secrets, tasks'
 * stream URLs.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

const SEALED = /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+$/;

/** Whether `value` has the sealed form (a URL or any text with `:` or `/` never has). */
export function isSealed(value: string): boolean {
  return SEALED.test(value);
}

export class SecretBox {
  private readonly key: Buffer;

  /**
   * `sealKey`: the configured key (at least 16 characters; `what` names it in the error); `purpose`: a
   * label that keeps the keys of two uses apart even when they are configured alike.
   */
  constructor(sealKey: string, purpose: string, what = 'seal key') {
    if (sealKey.length < 16) throw new Error(`${what} must have at least 16 characters`);
    this.key = createHmac('sha256', sealKey).update(purpose).digest();
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
