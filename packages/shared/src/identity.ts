import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The internal identity header. The gateway authenticates the caller and forwards the subject in this
 * header, signed with a shared secret; services accept a request only with a valid signature. The
 * gateway removes any copy a client sent.
 */
export const IDENTITY_HEADER = 'x-vision-identity';

export interface Identity {
  subject: string;
  requestId: string;
}

interface Claims {
  sub: string;
  rid: string;
  iat: number;
}

/** How long a signed header stays valid; it is made per request, so this only bounds replay. */
export const IDENTITY_MAX_AGE_MS = 10 * 60 * 1000;

function mac(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(payload).digest('base64url');
}

export function signIdentity(secret: string, identity: Identity, now = Date.now()): string {
  const claims: Claims = { sub: identity.subject, rid: identity.requestId, iat: now };
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${mac(secret, payload)}`;
}

/** Returns the identity when the header is present, well-formed, correctly signed and fresh; otherwise undefined. */
export function verifyIdentity(
  secret: string,
  header: string | undefined,
  now = Date.now(),
): Identity | undefined {
  if (!header) return undefined;
  const dot = header.indexOf('.');
  if (dot <= 0) return undefined;
  const payload = header.slice(0, dot);
  const given = Buffer.from(header.slice(dot + 1));
  const expected = Buffer.from(mac(secret, payload));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof claims !== 'object' || claims === null) return undefined;
  const { sub, rid, iat } = claims as Partial<Claims>;
  if (typeof sub !== 'string' || sub === '' || typeof rid !== 'string' || typeof iat !== 'number')
    return undefined;
  if (Math.abs(now - iat) > IDENTITY_MAX_AGE_MS) return undefined;
  return { subject: sub, requestId: rid };
}
