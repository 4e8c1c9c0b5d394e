import { createHash, randomBytes } from 'node:crypto';

/**
 * API keys look like `vk_<key id>_<secret>`. Only the sha256 of the whole key is stored; the key id
 * (public, short) names the key in listings and revocation. Keys are 190+ bits of randomness, so a
 * fast hash is the right choice (no password stretching needed).
 */
export const KEY_PREFIX = 'vk';

export interface NewKey {
  keyId: string;
  key: string;
  hash: string;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function generateKey(): NewKey {
  const keyId = randomBytes(6).toString('hex');
  const secret = randomBytes(24).toString('base64url');
  const key = `${KEY_PREFIX}_${keyId}_${secret}`;
  return { keyId, key, hash: hashKey(key) };
}

/** A stable id for a key configured from the environment (VISION_API_KEYS), derived from its hash. */
export function keyIdForConfiguredKey(key: string): string {
  return `env-${hashKey(key).slice(0, 12)}`;
}

// The scheme name is case-insensitive (RFC 9110 section 11.1: `bearer`, `BEARER` are `Bearer`). The flag
// changes nothing for the key: its class already holds every printable character, and it is returned as sent.
const BEARER = /^Bearer ([\x21-\x7e]{8,512})$/i;

/**
 * Extracts the key from an Authorization header that is exactly `Bearer <key>` (the scheme in any case, one
 * space, printable characters, no trailing data). Anything else yields undefined.
 */
export function parseBearer(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const m = BEARER.exec(header);
  return m ? m[1] : undefined;
}

const SUBJECT = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;

export function isValidSubject(subject: string): boolean {
  return SUBJECT.test(subject);
}

/** Parses VISION_API_KEYS: `key:subject,key2:subject2`. Throws with a message naming the bad entry position. */
export function parseConfiguredKeys(value: string): { key: string; subject: string }[] {
  const out: { key: string; subject: string }[] = [];
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .forEach((entry, i) => {
      const idx = entry.lastIndexOf(':');
      const key = idx > 0 ? entry.slice(0, idx) : '';
      const subject = idx > 0 ? entry.slice(idx + 1) : '';
      if (key.length < 8 || !/^[\x21-\x7e]+$/.test(key))
        throw new Error(`entry ${i + 1}: expected key:subject with a key of at least 8 printable characters`);
      if (!isValidSubject(subject)) throw new Error(`entry ${i + 1}: invalid subject`);
      out.push({ key, subject });
    });
  return out;
}
