import { createHmac } from 'node:crypto';
import { IDENTITY_CLOCK_SKEW_MS, IDENTITY_TTL_MS, signIdentity, verifyIdentity } from '../../src';

const secret = 'a-secret-of-sufficient-length';
const id = { subject: 'key-123', requestId: 'req-1' };
const claimsOf = (header: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(header.split('.')[0], 'base64url').toString('utf8')) as Record<string, unknown>;
/** A header with the given claims, correctly signed (what a holder of the secret could make). */
function signed(claims: Record<string, unknown>): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${createHmac('sha256', secret).update(payload).digest('base64url')}`;
}

describe('signed identity header', () => {
  it('verifies what it signed, for its audience', () => {
    const now = Date.UTC(2026, 0, 1);
    expect(verifyIdentity(secret, signIdentity(secret, id, 'tasks', now), 'tasks', now + 1000)).toEqual(id);
    expect(verifyIdentity(secret, signIdentity(secret, id, 'tasks', now), ['images', 'tasks'], now)).toEqual(
      id,
    );
  });

  it('names its audience and expires within seconds', () => {
    const now = Date.UTC(2026, 0, 1);
    const claims = claimsOf(signIdentity(secret, id, 'inference', now));
    expect(claims).toMatchObject({ sub: 'key-123', rid: 'req-1', aud: 'inference', iat: now });
    expect(claims.exp).toBe(now + IDENTITY_TTL_MS);
    expect(IDENTITY_TTL_MS).toBeLessThanOrEqual(60_000);
  });

  it('refuses a header made for another service', () => {
    const header = signIdentity(secret, id, 'tasks');
    expect(verifyIdentity(secret, header, 'inference')).toBeUndefined();
    expect(verifyIdentity(secret, header, ['quota', 'results'])).toBeUndefined();
    // A header without an audience (the format before audiences) is refused everywhere.
    expect(
      verifyIdentity(
        secret,
        signed({ sub: 'a', rid: 'r', iat: Date.now(), exp: Date.now() + 1000 }),
        'tasks',
      ),
    ).toBeUndefined();
  });

  it('rejects a tampered payload or signature', () => {
    const header = signIdentity(secret, id, 'tasks');
    const [payload, sig] = header.split('.');
    const forged = Buffer.from(JSON.stringify({ ...claimsOf(header), sub: 'admin' })).toString('base64url');
    expect(verifyIdentity(secret, `${forged}.${sig}`, 'tasks')).toBeUndefined();
    const flipped = sig[0] === 'A' ? `B${sig.slice(1)}` : `A${sig.slice(1)}`;
    expect(verifyIdentity(secret, `${payload}.${flipped}`, 'tasks')).toBeUndefined();
    expect(verifyIdentity(secret, `${payload}.`, 'tasks')).toBeUndefined();
    expect(verifyIdentity(secret, payload, 'tasks')).toBeUndefined();
    expect(verifyIdentity(secret, '', 'tasks')).toBeUndefined();
    expect(verifyIdentity(secret, undefined, 'tasks')).toBeUndefined();
  });

  it('rejects another secret', () => {
    expect(
      verifyIdentity('another-secret-entirely', signIdentity(secret, id, 'tasks'), 'tasks'),
    ).toBeUndefined();
  });

  it('rejects an expired header, and one from the future', () => {
    const now = Date.UTC(2026, 0, 1);
    const header = signIdentity(secret, id, 'tasks', now);
    const lastValid = now + IDENTITY_TTL_MS + IDENTITY_CLOCK_SKEW_MS;
    expect(verifyIdentity(secret, header, 'tasks', lastValid)).toEqual(id);
    expect(verifyIdentity(secret, header, 'tasks', lastValid + 1)).toBeUndefined();
    expect(verifyIdentity(secret, header, 'tasks', now - IDENTITY_CLOCK_SKEW_MS - 1)).toBeUndefined();
  });

  it('refuses a signed header whose lifetime exceeds the TTL', () => {
    const now = Date.now();
    const claims = { sub: 'a', rid: 'r', aud: 'tasks', iat: now, exp: now + IDENTITY_TTL_MS + 1 };
    expect(verifyIdentity(secret, signed(claims), 'tasks', now)).toBeUndefined();
    expect(verifyIdentity(secret, signed({ ...claims, exp: now + 1000 }), 'tasks', now)).toEqual({
      subject: 'a',
      requestId: 'r',
    });
  });
});
