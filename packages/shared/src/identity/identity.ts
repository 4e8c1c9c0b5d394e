import { createHash, type KeyObject, sign, verify } from 'node:crypto';
import { IDENTITY_ROUTES, type IdentityIssuer } from './identity-routes';

/**
 * The internal identity header. The gateway authenticates the caller and forwards the subject in this
 * header, signed with its own Ed25519 private key; services hold only public keys, so no service can
 * mint a caller's identity toward another. A service that calls others on a caller's behalf (tasks,
 * images, results) signs with a key of its own. Which issuer opens which route is one table
 * (IDENTITY_ROUTES, identity-routes.ts): a service's guard refuses any other issuer on that route, and an
 * issuer's key is given only to the services it calls there (IDENTITY_CALLS). The inference service calls
 * no one and holds no private key. The gateway removes any copy a client sent.
 *
 * Each header names its issuer, its audience (the service it is for), the call it is made for (a hash
 * of the method and the request target, path and query) and expires a few seconds after it is made, so
 * a header seen by one service cannot be replayed against another one, nor on another route or method
 * of the same one, nor later.
 */
export const IDENTITY_HEADER = 'x-vision-identity';

export interface Identity {
  subject: string;
  requestId: string;
}

/** An identity as a service received it: who signed it and for which service. */
export interface VerifiedIdentity extends Identity {
  /** The service that signed the header. */
  issuer: string;
  /** The service the header was made for. */
  audience: string;
}

/** The request a header is made for: its method and its target (path and query, as sent). */
export interface IdentityCall {
  method: string;
  target: string;
}

/** The issuers, in a fixed order (their keys, the chart's list). */
const ISSUERS: readonly IdentityIssuer[] = ['gateway', 'tasks', 'images', 'results'];
const AUDIENCES = ['tasks', 'quota', 'results', 'images', 'inference'] as const;

/**
 * The services each issuer calls on some route of IDENTITY_ROUTES: its key is accepted there and nowhere
 * else. Derived from the table, never written by hand. Read it with Object.hasOwn (issuerCalls).
 */
export const IDENTITY_CALLS: Readonly<Record<string, readonly string[]>> = Object.freeze(
  Object.fromEntries(
    ISSUERS.map((issuer) => [
      issuer,
      AUDIENCES.filter((s) => IDENTITY_ROUTES.some((r) => r.service === s && r.issuers.includes(issuer))),
    ]),
  ),
);

/** The services that sign identities (and so hold a private key). */
export const IDENTITY_ISSUERS: readonly string[] = [...ISSUERS];

/** The services `issuer` calls; none for a name that is no issuer (`constructor` included). */
export function issuerCalls(issuer: unknown): readonly string[] {
  return typeof issuer === 'string' && Object.hasOwn(IDENTITY_CALLS, issuer) ? IDENTITY_CALLS[issuer] : [];
}

/** The issuers whose headers `service` accepts (on one route or another). */
export function callersOf(service: string): string[] {
  return IDENTITY_ISSUERS.filter((issuer) => issuerCalls(issuer).includes(service));
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
  /** The call it is made for: callHash of its method and target. */
  call: string;
  /** Issued at and expires at, in ms since the epoch. */
  iat: number;
  exp: number;
}

/** How long a signed header stays valid. It is made per request, just before the request is sent. */
export const IDENTITY_TTL_MS = 30_000;
/** Clocks of two hosts may differ by this much. */
export const IDENTITY_CLOCK_SKEW_MS = 5_000;

/** The longest issuer or audience name read from a header (the longest real one is 9 characters). */
const MAX_NAME = 64;

/** The hash that binds a header to one request: SHA-256 of `METHOD target`, base64url. */
export function callHash(call: IdentityCall): string {
  return createHash('sha256').update(`${call.method.toUpperCase()} ${call.target}`).digest('base64url');
}

/**
 * Signs `identity` for the service `audience` and the request `call` (the method and the target the
 * request is sent with); the header expires IDENTITY_TTL_MS after `now`. A call outside the signer's
 * scope (IDENTITY_CALLS) is a programming error and throws.
 */
export function signIdentity(
  signer: IdentitySigner,
  identity: Identity,
  audience: string,
  call: IdentityCall,
  now = Date.now(),
): string {
  if (!issuerCalls(signer.issuer).includes(audience))
    throw new Error(`${signer.issuer} does not call ${audience}: no identity is signed for it`);
  const claims: Claims = {
    sub: identity.subject,
    rid: identity.requestId,
    iss: signer.issuer,
    aud: audience,
    call: callHash(call),
    iat: now,
    exp: now + IDENTITY_TTL_MS,
  };
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${sign(null, Buffer.from(payload), signer.key).toString('base64url')}`;
}

const isName = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_NAME;

function decodeClaims(payload: string): Claims | undefined {
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof claims !== 'object' || claims === null) return undefined;
  const { sub, rid, iss, aud, call, iat, exp } = claims as Partial<Record<keyof Claims, unknown>>;
  if (typeof sub !== 'string' || sub === '' || typeof rid !== 'string') return undefined;
  if (!isName(iss) || !isName(aud) || typeof call !== 'string') return undefined;
  if (typeof iat !== 'number' || typeof exp !== 'number') return undefined;
  return { sub, rid, iss, aud, call, iat, exp };
}

/**
 * Returns the identity, with its issuer and audience, when the header is present, well-formed, made for
 * `audience` (one of them, for a stand-in serving several) and for this very request (`call`: the method
 * and target it arrived with), signed by an issuer that calls that audience with the key this verifier
 * holds for it, and not expired; otherwise undefined. Whether the issuer may call the route the request
 * reaches is the route table's to say (identity-guard.ts). Never throws on what a header holds.
 */
export function verifyIdentity(
  verifier: IdentityVerifier,
  header: string | undefined,
  audience: string | readonly string[],
  call: IdentityCall,
  now = Date.now(),
): VerifiedIdentity | undefined {
  const checked = checkIdentity(verifier, header, audience, call, now);
  return checked === 'expired' ? undefined : checked;
}

/**
 * verifyIdentity, telling apart a header that is valid in every way but its age: `expired` when it was signed
 * for this very request by an issuer this service trusts, and is now past its expiry (or not yet valid). Such a
 * call waited too long inside the system after the gateway authenticated it: an internal deadline, not the
 * caller's credentials.
 */
export function checkIdentity(
  verifier: IdentityVerifier,
  header: string | undefined,
  audience: string | readonly string[],
  call: IdentityCall,
  now = Date.now(),
): VerifiedIdentity | 'expired' | undefined {
  if (!header) return undefined;
  const dot = header.indexOf('.');
  if (dot <= 0 || dot === header.length - 1) return undefined;
  const payload = header.slice(0, dot);
  const claims = decodeClaims(payload);
  if (!claims) return undefined;
  const audiences: readonly string[] = typeof audience === 'string' ? [audience] : audience;
  if (!audiences.includes(claims.aud)) return undefined;
  // The issuer must be one that calls this audience, and its key one this service holds.
  if (!issuerCalls(claims.iss).includes(claims.aud)) return undefined;
  const key = verifier.keys.get(claims.iss);
  if (!key) return undefined;
  let valid: boolean;
  try {
    valid = verify(null, Buffer.from(payload), key, Buffer.from(header.slice(dot + 1), 'base64url'));
  } catch {
    return undefined;
  }
  if (!valid) return undefined;
  // Made for another request (another route, method or query): a replay.
  if (claims.call !== callHash(call)) return undefined;
  // A header lives at most IDENTITY_TTL_MS, whatever its issuer claims, and is not accepted early.
  if (claims.exp - claims.iat > IDENTITY_TTL_MS || claims.exp < claims.iat) return undefined;
  if (now > claims.exp + IDENTITY_CLOCK_SKEW_MS || now < claims.iat - IDENTITY_CLOCK_SKEW_MS)
    return 'expired';
  return { subject: claims.sub, requestId: claims.rid, issuer: claims.iss, audience: claims.aud };
}
