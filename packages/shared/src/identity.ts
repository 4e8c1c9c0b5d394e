import { type KeyObject, sign, verify } from 'node:crypto';

/**
 * The internal identity header. The gateway authenticates the caller and forwards the subject in this
 * header, signed with its own Ed25519 private key; services hold only public keys, so no service can
 * mint a caller's identity toward another. A service that calls others on a caller's behalf (tasks,
 * images, results) signs with a key of its own, which is accepted only by the services it calls
 * (IDENTITY_CALLS). The inference service calls no one and holds no private key. The gateway removes
 * any copy a client sent.
 *
 * Each header names its issuer, its audience (the service it is for) and expires a few seconds after it
 * is made, so a header seen by one service cannot be replayed against another one, nor later against
 * the same one.
 */
export const IDENTITY_HEADER = 'x-vision-identity';

export interface Identity {
  subject: string;
  requestId: string;
}

/** The services each issuer calls: its key is accepted there and nowhere else. */
export const IDENTITY_CALLS: Readonly<Record<string, readonly string[]>> = {
  gateway: ['tasks', 'quota', 'results', 'images'],
  tasks: ['inference', 'quota', 'images'],
  images: ['inference', 'quota'],
  results: ['tasks'],
};

/** The services that sign identities (and so hold a private key). */
export const IDENTITY_ISSUERS = Object.keys(IDENTITY_CALLS);

/** The issuers whose headers `service` accepts. */
export function callersOf(service: string): string[] {
  return IDENTITY_ISSUERS.filter((issuer) => IDENTITY_CALLS[issuer].includes(service));
}

/** A service's private key, for the identities it signs as `issuer`. */
export interface IdentitySigner {
  issuer: string;
  key: KeyObject;
}

/** The public keys a service accepts identities from, by issuer. */
export interface IdentityVerifier {
  keys: ReadonlyMap<string, KeyObject>;
}

interface Claims {
  sub: string;
  rid: string;
  /** The service that signed the header. */
  iss: string;
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

/**
 * Signs `identity` for the service `audience`; the header expires IDENTITY_TTL_MS after `now`. A call
 * outside the signer's scope (IDENTITY_CALLS) is a programming error and throws.
 */
export function signIdentity(
  signer: IdentitySigner,
  identity: Identity,
  audience: string,
  now = Date.now(),
): string {
  if (!IDENTITY_CALLS[signer.issuer]?.includes(audience))
    throw new Error(`${signer.issuer} does not call ${audience}: no identity is signed for it`);
  const claims: Claims = {
    sub: identity.subject,
    rid: identity.requestId,
    iss: signer.issuer,
    aud: audience,
    iat: now,
    exp: now + IDENTITY_TTL_MS,
  };
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${sign(null, Buffer.from(payload), signer.key).toString('base64url')}`;
}

function decodeClaims(payload: string): Claims | undefined {
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof claims !== 'object' || claims === null) return undefined;
  const { sub, rid, iss, aud, iat, exp } = claims as Partial<Claims>;
  if (typeof sub !== 'string' || sub === '' || typeof rid !== 'string') return undefined;
  if (typeof iss !== 'string' || typeof aud !== 'string') return undefined;
  if (typeof iat !== 'number' || typeof exp !== 'number') return undefined;
  return { sub, rid, iss, aud, iat, exp };
}

/**
 * Returns the identity when the header is present, well-formed, signed by an issuer that calls
 * `audience` (one of them, for a stand-in serving several) with the key this verifier holds for it,
 * and not expired; otherwise undefined.
 */
export function verifyIdentity(
  verifier: IdentityVerifier,
  header: string | undefined,
  audience: string | readonly string[],
  now = Date.now(),
): Identity | undefined {
  if (!header) return undefined;
  const dot = header.indexOf('.');
  if (dot <= 0 || dot === header.length - 1) return undefined;
  const payload = header.slice(0, dot);
  const claims = decodeClaims(payload);
  if (!claims) return undefined;
  const audiences: readonly string[] = typeof audience === 'string' ? [audience] : audience;
  if (!audiences.includes(claims.aud)) return undefined;
  // The issuer must be one that calls this audience, and its key one this service holds.
  if (!IDENTITY_CALLS[claims.iss]?.includes(claims.aud)) return undefined;
  const key = verifier.keys.get(claims.iss);
  if (!key) return undefined;
  let valid = false;
  try {
    valid = verify(null, Buffer.from(payload), key, Buffer.from(header.slice(dot + 1), 'base64url'));
  } catch {
    return undefined;
  }
  if (!valid) return undefined;
  // A header lives at most IDENTITY_TTL_MS, whatever its issuer claims, and is not accepted early.
  if (claims.exp - claims.iat > IDENTITY_TTL_MS || claims.exp < claims.iat) return undefined;
  if (now > claims.exp + IDENTITY_CLOCK_SKEW_MS || now < claims.iat - IDENTITY_CLOCK_SKEW_MS)
    return undefined;
  return { subject: claims.sub, requestId: claims.rid };
}
