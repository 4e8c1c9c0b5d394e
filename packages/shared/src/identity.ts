import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The internal identity header. The gateway authenticates the caller and forwards the subject in this
 * header, signed with a shared secret; services accept a request only with a valid signature. The
 * gateway removes any copy a client sent.
 *
 * Each header names its audience (the service it is for: `tasks`, `inference`, ...) and expires a few
 * seconds after it is made, so a header seen by one service cannot be replayed against another one,
 * nor later against the same one.
 */
export const IDENTITY_HEADER = 'x-vision-identity';

export interface Identity {
  subject: string;
  requestId: string;
}

interface Claims {
  sub: string;
  rid: string;
  /** The service the header is for. */
  aud: string;
  /** Issued at and expires at, in ms since the epoch. */
  iat: number;
  exp: number;
}

/** How long a signed header stays valid. It is made per request, just before the request is sent. */
export const IDENTITY_TTL_MS = 30_000;
/** Clocks of two hosts may differ by this much. */
export const IDENTITY_CLOCK_SKEW_MS = 5_000;

function mac(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(payload).digest('base64url');
}

/** Signs `identity` for the service `audience`; the header expires IDENTITY_TTL_MS after `now`. */
export function signIdentity(secret: string, identity: Identity, audience: string, now = Date.now()): string {
  const claims: Claims = {
    sub: identity.subject,
    rid: identity.requestId,
    aud: audience,
    iat: now,
    exp: now + IDENTITY_TTL_MS,
  };
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${mac(secret, payload)}`;
}

function decodeClaims(payload: string): Claims | undefined {
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof claims !== 'object' || claims === null) return undefined;
  const { sub, rid, aud, iat, exp } = claims as Partial<Claims>;
  if (typeof sub !== 'string' || sub === '' || typeof rid !== 'string' || typeof aud !== 'string')
    return undefined;
  if (typeof iat !== 'number' || typeof exp !== 'number') return undefined;
  return { sub, rid, aud, iat, exp };
}

/**
 * Returns the identity when the header is present, well-formed, correctly signed, for `audience`
 * (one of them, for a stand-in serving several) and not expired; otherwise undefined.
 */
export function verifyIdentity(
  secret: string,
  header: string | undefined,
  audience: string | readonly string[],
  now = Date.now(),
): Identity | undefined {
  if (!header) return undefined;
  const dot = header.indexOf('.');
  if (dot <= 0) return undefined;
  const payload = header.slice(0, dot);
  const given = Buffer.from(header.slice(dot + 1));
  const expected = Buffer.from(mac(secret, payload));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const claims = decodeClaims(payload);
  if (!claims) return undefined;
  const audiences: readonly string[] = typeof audience === 'string' ? [audience] : audience;
  if (!audiences.includes(claims.aud)) return undefined;
  // A header lives at most IDENTITY_TTL_MS, whatever its issuer claims, and is not accepted early.
  if (claims.exp - claims.iat > IDENTITY_TTL_MS || claims.exp < claims.iat) return undefined;
  if (now > claims.exp + IDENTITY_CLOCK_SKEW_MS || now < claims.iat - IDENTITY_CLOCK_SKEW_MS)
    return undefined;
  return { subject: claims.sub, requestId: claims.rid };
}
