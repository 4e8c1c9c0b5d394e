import { generateKeyPairSync, sign } from 'node:crypto';
import {
  callersOf,
  IDENTITY_CALLS,
  IDENTITY_CLOCK_SKEW_MS,
  IDENTITY_TTL_MS,
  signIdentity,
  verifyIdentity,
  type IdentitySigner,
  type IdentityVerifier,
} from '../../src';

const pair = (issuer: string) => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { signer: { issuer, key: privateKey } as IdentitySigner, pub: publicKey };
};
const gateway = pair('gateway');
const tasks = pair('tasks');
const inferencePair = pair('inference');
/** What each service holds: the public keys of its callers only. */
const verifierOf = (service: string): IdentityVerifier => ({
  keys: new Map(
    callersOf(service).map((issuer) => [issuer, { gateway, tasks }[issuer as 'gateway' | 'tasks']?.pub]),
  ) as IdentityVerifier['keys'],
});
const all: IdentityVerifier = {
  keys: new Map([
    ['gateway', gateway.pub],
    ['tasks', tasks.pub],
  ]),
};

const id = { subject: 'key-123', requestId: 'req-1' };
const claimsOf = (header: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(header.split('.')[0], 'base64url').toString('utf8')) as Record<string, unknown>;
/** A header with the given claims, correctly signed with `signer`'s key (what its holder could make). */
function signed(claims: Record<string, unknown>, signer: IdentitySigner = gateway.signer): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${sign(null, Buffer.from(payload), signer.key).toString('base64url')}`;
}

describe('signed identity header', () => {
  it('verifies what it signed, for its audience', () => {
    const now = Date.UTC(2026, 0, 1);
    expect(verifyIdentity(all, signIdentity(gateway.signer, id, 'tasks', now), 'tasks', now + 1000)).toEqual(
      id,
    );
    expect(
      verifyIdentity(all, signIdentity(gateway.signer, id, 'tasks', now), ['images', 'tasks'], now),
    ).toEqual(id);
  });

  it('names its issuer and audience and expires within seconds', () => {
    const now = Date.UTC(2026, 0, 1);
    const claims = claimsOf(signIdentity(tasks.signer, id, 'inference', now));
    expect(claims).toMatchObject({ sub: 'key-123', rid: 'req-1', iss: 'tasks', aud: 'inference', iat: now });
    expect(claims.exp).toBe(now + IDENTITY_TTL_MS);
    expect(IDENTITY_TTL_MS).toBeLessThanOrEqual(60_000);
  });

  it('refuses a header made for another service', () => {
    const header = signIdentity(gateway.signer, id, 'tasks');
    expect(verifyIdentity(all, header, 'quota')).toBeUndefined();
    expect(verifyIdentity(all, header, ['quota', 'results'])).toBeUndefined();
    // A header without an issuer or an audience is refused everywhere.
    const now = Date.now();
    expect(verifyIdentity(all, signed({ sub: 'a', rid: 'r', iat: now, exp: now + 1000 }), 'tasks')).toBe(
      undefined,
    );
    expect(
      verifyIdentity(all, signed({ sub: 'a', rid: 'r', aud: 'tasks', iat: now, exp: now + 1000 }), 'tasks'),
    ).toBeUndefined();
  });

  it("accepts a key only at the services its holder calls: tasks' key cannot speak for a caller to results", () => {
    const now = Date.now();
    // tasks calls inference and quota; its correctly signed header for results (or tasks) is refused.
    const toResults = signed(
      { sub: 'a', rid: 'r', iss: 'tasks', aud: 'results', iat: now, exp: now + 1000 },
      tasks.signer,
    );
    expect(verifyIdentity(all, toResults, 'results')).toBeUndefined();
    expect(() => signIdentity(tasks.signer, id, 'results')).toThrow('tasks does not call results');
    // The gateway does not call inference: a header from its key is refused there.
    const toInference = signed({
      sub: 'a',
      rid: 'r',
      iss: 'gateway',
      aud: 'inference',
      iat: now,
      exp: now + 1000,
    });
    expect(verifyIdentity(all, toInference, 'inference')).toBeUndefined();
    // A header claiming an issuer whose key it was not signed with.
    const claimsTasks = signed({ sub: 'a', rid: 'r', iss: 'tasks', aud: 'quota', iat: now, exp: now + 1000 });
    expect(verifyIdentity(all, claimsTasks, 'quota')).toBeUndefined();
    // Inference calls no one and signs nothing that any service accepts.
    expect(IDENTITY_CALLS.inference).toBeUndefined();
    const fromInference = signed(
      { sub: 'a', rid: 'r', iss: 'inference', aud: 'quota', iat: now, exp: now + 1000 },
      inferencePair.signer,
    );
    expect(verifyIdentity(verifierOf('quota'), fromInference, 'quota')).toBeUndefined();
    expect(verifyIdentity(verifierOf('quota'), signIdentity(tasks.signer, id, 'quota'), 'quota')).toEqual(id);
  });

  it('rejects a tampered payload or signature', () => {
    const header = signIdentity(gateway.signer, id, 'tasks');
    const [payload, sig] = header.split('.');
    const forged = Buffer.from(JSON.stringify({ ...claimsOf(header), sub: 'admin' })).toString('base64url');
    expect(verifyIdentity(all, `${forged}.${sig}`, 'tasks')).toBeUndefined();
    const flipped = sig[0] === 'A' ? `B${sig.slice(1)}` : `A${sig.slice(1)}`;
    expect(verifyIdentity(all, `${payload}.${flipped}`, 'tasks')).toBeUndefined();
    expect(verifyIdentity(all, `${payload}.`, 'tasks')).toBeUndefined();
    expect(verifyIdentity(all, payload, 'tasks')).toBeUndefined();
    expect(verifyIdentity(all, '', 'tasks')).toBeUndefined();
    expect(verifyIdentity(all, undefined, 'tasks')).toBeUndefined();
  });

  it("rejects another key pair's signature under the same issuer name", () => {
    const impostor = pair('gateway');
    expect(verifyIdentity(all, signIdentity(impostor.signer, id, 'tasks'), 'tasks')).toBeUndefined();
  });

  it('rejects an expired header, and one from the future', () => {
    const now = Date.UTC(2026, 0, 1);
    const header = signIdentity(gateway.signer, id, 'tasks', now);
    const lastValid = now + IDENTITY_TTL_MS + IDENTITY_CLOCK_SKEW_MS;
    expect(verifyIdentity(all, header, 'tasks', lastValid)).toEqual(id);
    expect(verifyIdentity(all, header, 'tasks', lastValid + 1)).toBeUndefined();
    expect(verifyIdentity(all, header, 'tasks', now - IDENTITY_CLOCK_SKEW_MS - 1)).toBeUndefined();
  });

  it('refuses a signed header whose lifetime exceeds the TTL', () => {
    const now = Date.now();
    const claims = {
      sub: 'a',
      rid: 'r',
      iss: 'gateway',
      aud: 'tasks',
      iat: now,
      exp: now + IDENTITY_TTL_MS + 1,
    };
    expect(verifyIdentity(all, signed(claims), 'tasks', now)).toBeUndefined();
    expect(verifyIdentity(all, signed({ ...claims, exp: now + 1000 }), 'tasks', now)).toEqual({
      subject: 'a',
      requestId: 'r',
    });
  });
});
