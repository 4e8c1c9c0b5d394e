import { generateKeyPairSync, sign } from 'node:crypto';
import {
  callHash,
  callersOf,
  checkIdentity,
  IDENTITY_CALLS,
  IDENTITY_CLOCK_SKEW_MS,
  IDENTITY_ISSUERS,
  IDENTITY_ROUTES,
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
const results = pair('results');
const inferencePair = pair('inference');
/** What each service holds: the public keys of its callers only. */
const verifierOf = (service: string): IdentityVerifier => ({
  keys: new Map(
    callersOf(service).map((issuer) => [
      issuer,
      { gateway, tasks, results }[issuer as 'gateway' | 'tasks' | 'results']?.pub,
    ]),
  ) as IdentityVerifier['keys'],
});
const all: IdentityVerifier = {
  keys: new Map([
    ['gateway', gateway.pub],
    ['tasks', tasks.pub],
    ['results', results.pub],
  ]),
};

const id = { subject: 'key-123', requestId: 'req-1' };
const GET_TASK = { method: 'GET', target: '/v1/vision/tasks/t1' };
const SCENES = { method: 'GET', target: '/internal/v1/scenes' };
const claimsOf = (header: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(header.split('.')[0], 'base64url').toString('utf8')) as Record<string, unknown>;
/** A header with the given claims, correctly signed with `signer`'s key (what its holder could make). */
function signed(claims: Record<string, unknown>, signer: IdentitySigner = gateway.signer): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${sign(null, Buffer.from(payload), signer.key).toString('base64url')}`;
}
/** Claims of a valid gateway header for GET_TASK at tasks, made now. */
const base = (now = Date.now()) => ({
  sub: 'a',
  rid: 'r',
  iss: 'gateway',
  aud: 'tasks',
  call: callHash(GET_TASK),
  iat: now,
  exp: now + 1000,
});

describe('signed identity header', () => {
  it('verifies what it signed, for its audience and its request, and names the issuer', () => {
    const now = Date.UTC(2026, 0, 1);
    const header = signIdentity(gateway.signer, id, 'tasks', GET_TASK, now);
    const verified = { ...id, issuer: 'gateway', audience: 'tasks' };
    expect(verifyIdentity(all, header, 'tasks', GET_TASK, now + 1000)).toEqual(verified);
    expect(verifyIdentity(all, header, ['images', 'tasks'], GET_TASK, now)).toEqual(verified);
    const fromResults = signIdentity(results.signer, id, 'tasks', {
      method: 'GET',
      target: '/internal/v1/tasks/t1',
    });
    expect(
      verifyIdentity(all, fromResults, 'tasks', { method: 'GET', target: '/internal/v1/tasks/t1' }),
    ).toMatchObject({ issuer: 'results' });
  });

  it('names its issuer, audience and call and expires within seconds', () => {
    const now = Date.UTC(2026, 0, 1);
    const claims = claimsOf(signIdentity(tasks.signer, id, 'inference', SCENES, now));
    expect(claims).toMatchObject({
      sub: 'key-123',
      rid: 'req-1',
      iss: 'tasks',
      aud: 'inference',
      call: callHash(SCENES),
      iat: now,
    });
    expect(claims.exp).toBe(now + IDENTITY_TTL_MS);
    expect(IDENTITY_TTL_MS).toBeLessThanOrEqual(60_000);
  });

  it('is bound to its request: another method, path or query is refused', () => {
    const header = signIdentity(gateway.signer, id, 'tasks', GET_TASK);
    expect(verifyIdentity(all, header, 'tasks', GET_TASK)).toBeDefined();
    expect(
      verifyIdentity(all, header, 'tasks', { method: 'POST', target: '/v1/vision/tasks/t1' }),
    ).toBeUndefined();
    expect(
      verifyIdentity(all, header, 'tasks', { method: 'GET', target: '/v1/vision/tasks/t2' }),
    ).toBeUndefined();
    expect(
      verifyIdentity(all, header, 'tasks', { method: 'GET', target: '/v1/vision/tasks' }),
    ).toBeUndefined();
    expect(
      verifyIdentity(all, header, 'tasks', { method: 'GET', target: '/v1/vision/tasks/t1?x=1' }),
    ).toBeUndefined();
    // The method is compared in upper case, as HTTP servers read it.
    expect(verifyIdentity(all, header, 'tasks', { method: 'get', target: GET_TASK.target })).toBeDefined();
    // A header without a call, or with another call's hash, is refused.
    const { call: _omitted, ...unbound } = base();
    expect(verifyIdentity(all, signed(unbound), 'tasks', GET_TASK)).toBeUndefined();
    expect(verifyIdentity(all, signed({ ...base(), call: 'x' }), 'tasks', GET_TASK)).toBeUndefined();
  });

  it('refuses a header made for another service', () => {
    const header = signIdentity(gateway.signer, id, 'tasks', GET_TASK);
    expect(verifyIdentity(all, header, 'quota', GET_TASK)).toBeUndefined();
    expect(verifyIdentity(all, header, ['quota', 'results'], GET_TASK)).toBeUndefined();
    // A header without an issuer or an audience is refused everywhere.
    const { iss: _iss, ...noIssuer } = base();
    const { aud: _aud, ...noAudience } = base();
    expect(verifyIdentity(all, signed(noIssuer), 'tasks', GET_TASK)).toBeUndefined();
    expect(verifyIdentity(all, signed(noAudience), 'tasks', GET_TASK)).toBeUndefined();
  });

  it('refuses unknown and hostile issuers without throwing', () => {
    const hostile: unknown[] = [
      'constructor',
      '__proto__',
      'toString',
      'hasOwnProperty',
      'valueOf',
      'inference',
      'x'.repeat(100_000),
      '',
      42,
      null,
      true,
      ['gateway'],
      { toString: 'gateway' },
    ];
    for (const iss of hostile) {
      const header = signed({ ...base(), iss });
      expect(() => verifyIdentity(all, header, 'tasks', GET_TASK)).not.toThrow();
      expect({ iss, verified: verifyIdentity(all, header, 'tasks', GET_TASK) }).toEqual({
        iss,
        verified: undefined,
      });
      // The same values as an audience.
      const aud = signed({ ...base(), aud: iss });
      expect(() => verifyIdentity(all, aud, 'tasks', GET_TASK)).not.toThrow();
      expect(verifyIdentity(all, aud, 'tasks', GET_TASK)).toBeUndefined();
    }
    // A payload of JSON that is not an object, or not JSON.
    for (const payload of ['null', '"gateway"', '[1]', '{', '__proto__']) {
      const p = Buffer.from(payload).toString('base64url');
      expect(verifyIdentity(all, `${p}.${p}`, 'tasks', GET_TASK)).toBeUndefined();
    }
    expect(() =>
      signIdentity({ issuer: 'constructor', key: gateway.signer.key }, id, 'tasks', GET_TASK),
    ).toThrow('constructor does not call tasks');
  });

  it("accepts a key only at the services its holder calls: tasks' key cannot speak for a caller to results", () => {
    const now = Date.now();
    // tasks calls inference, quota and images; its correctly signed header for results (or tasks) is refused.
    const toResults = signed({ ...base(now), iss: 'tasks', aud: 'results' }, tasks.signer);
    expect(verifyIdentity(all, toResults, 'results', GET_TASK)).toBeUndefined();
    expect(() => signIdentity(tasks.signer, id, 'results', GET_TASK)).toThrow('tasks does not call results');
    // The gateway does not call inference: a header from its key is refused there.
    const toInference = signed({ ...base(now), aud: 'inference', call: callHash(SCENES) });
    expect(verifyIdentity(all, toInference, 'inference', SCENES)).toBeUndefined();
    // A header claiming an issuer whose key it was not signed with.
    const claimsTasks = signed({ ...base(now), iss: 'tasks', aud: 'quota' });
    expect(verifyIdentity(all, claimsTasks, 'quota', GET_TASK)).toBeUndefined();
    // Inference calls no one and signs nothing that any service accepts.
    expect(Object.hasOwn(IDENTITY_CALLS, 'inference')).toBe(false);
    const fromInference = signed({ ...base(now), iss: 'inference', aud: 'quota' }, inferencePair.signer);
    expect(verifyIdentity(verifierOf('quota'), fromInference, 'quota', GET_TASK)).toBeUndefined();
    const charge = { method: 'POST', target: '/internal/v1/charges' };
    expect(
      verifyIdentity(verifierOf('quota'), signIdentity(tasks.signer, id, 'quota', charge), 'quota', charge),
    ).toMatchObject({ ...id, issuer: 'tasks' });
  });

  it('derives the services each issuer calls from the route table, and nothing else', () => {
    for (const issuer of IDENTITY_ISSUERS) {
      const fromTable = [
        ...new Set(IDENTITY_ROUTES.filter((r) => r.issuers.includes(issuer as never)).map((r) => r.service)),
      ];
      expect({ issuer, calls: [...IDENTITY_CALLS[issuer]].sort() }).toEqual({
        issuer,
        calls: fromTable.sort(),
      });
    }
    expect(IDENTITY_CALLS).toEqual({
      gateway: ['tasks', 'quota', 'results', 'images'],
      tasks: ['quota', 'images', 'inference'],
      images: ['quota', 'inference'],
      results: ['tasks', 'inference'],
    });
  });

  it('rejects a tampered payload or signature', () => {
    const header = signIdentity(gateway.signer, id, 'tasks', GET_TASK);
    const [payload, sig] = header.split('.');
    const forged = Buffer.from(JSON.stringify({ ...claimsOf(header), sub: 'admin' })).toString('base64url');
    expect(verifyIdentity(all, `${forged}.${sig}`, 'tasks', GET_TASK)).toBeUndefined();
    const flipped = sig[0] === 'A' ? `B${sig.slice(1)}` : `A${sig.slice(1)}`;
    expect(verifyIdentity(all, `${payload}.${flipped}`, 'tasks', GET_TASK)).toBeUndefined();
    expect(verifyIdentity(all, `${payload}.`, 'tasks', GET_TASK)).toBeUndefined();
    expect(verifyIdentity(all, payload, 'tasks', GET_TASK)).toBeUndefined();
    expect(verifyIdentity(all, '', 'tasks', GET_TASK)).toBeUndefined();
    expect(verifyIdentity(all, undefined, 'tasks', GET_TASK)).toBeUndefined();
  });

  it("rejects another key pair's signature under the same issuer name", () => {
    const impostor = pair('gateway');
    expect(verifyIdentity(all, signIdentity(impostor.signer, id, 'tasks', GET_TASK), 'tasks', GET_TASK)).toBe(
      undefined,
    );
  });

  it('rejects an expired header, and one from the future', () => {
    const now = Date.UTC(2026, 0, 1);
    const header = signIdentity(gateway.signer, id, 'tasks', GET_TASK, now);
    const lastValid = now + IDENTITY_TTL_MS + IDENTITY_CLOCK_SKEW_MS;
    expect(verifyIdentity(all, header, 'tasks', GET_TASK, lastValid)).toMatchObject(id);
    expect(verifyIdentity(all, header, 'tasks', GET_TASK, lastValid + 1)).toBeUndefined();
    expect(verifyIdentity(all, header, 'tasks', GET_TASK, now - IDENTITY_CLOCK_SKEW_MS - 1)).toBeUndefined();
    // checkIdentity tells an expired header (valid in every other way) from a bad one.
    expect(checkIdentity(all, header, 'tasks', GET_TASK, lastValid + 1)).toBe('expired');
    expect(checkIdentity(all, header, 'tasks', GET_TASK, now - IDENTITY_CLOCK_SKEW_MS - 1)).toBe('expired');
    expect(checkIdentity(all, header, 'quota', GET_TASK, lastValid + 1)).toBeUndefined();
    expect(
      checkIdentity(all, `${header.slice(0, -4)}AAAA`, 'tasks', GET_TASK, lastValid + 1),
    ).toBeUndefined();
  });

  it('refuses a signed header whose lifetime exceeds the TTL', () => {
    const now = Date.now();
    const claims = { ...base(now), exp: now + IDENTITY_TTL_MS + 1 };
    expect(verifyIdentity(all, signed(claims), 'tasks', GET_TASK, now)).toBeUndefined();
    expect(verifyIdentity(all, signed({ ...claims, exp: now + 1000 }), 'tasks', GET_TASK, now)).toEqual({
      subject: 'a',
      requestId: 'r',
      issuer: 'gateway',
      audience: 'tasks',
    });
  });
});
