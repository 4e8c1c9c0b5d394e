import { IDENTITY_MAX_AGE_MS, signIdentity, verifyIdentity } from '../../src';

const secret = 'a-secret-of-sufficient-length';
const id = { subject: 'key-123', requestId: 'req-1' };

describe('signed identity header', () => {
  it('verifies what it signed', () => {
    const now = Date.UTC(2026, 0, 1);
    expect(verifyIdentity(secret, signIdentity(secret, id, now), now + 1000)).toEqual(id);
  });

  it('rejects a tampered payload or signature', () => {
    const header = signIdentity(secret, id);
    const [payload, sig] = header.split('.');
    const forged = Buffer.from(JSON.stringify({ sub: 'admin', rid: 'req-1', iat: Date.now() })).toString(
      'base64url',
    );
    expect(verifyIdentity(secret, `${forged}.${sig}`)).toBeUndefined();
    const flipped = sig[0] === 'A' ? `B${sig.slice(1)}` : `A${sig.slice(1)}`;
    expect(verifyIdentity(secret, `${payload}.${flipped}`)).toBeUndefined();
    expect(verifyIdentity(secret, `${payload}.`)).toBeUndefined();
    expect(verifyIdentity(secret, payload)).toBeUndefined();
    expect(verifyIdentity(secret, '')).toBeUndefined();
    expect(verifyIdentity(secret, undefined)).toBeUndefined();
  });

  it('rejects another secret', () => {
    expect(verifyIdentity('another-secret-entirely', signIdentity(secret, id))).toBeUndefined();
  });

  it('rejects an expired header (and one from the future)', () => {
    const now = Date.UTC(2026, 0, 1);
    const header = signIdentity(secret, id, now);
    expect(verifyIdentity(secret, header, now + IDENTITY_MAX_AGE_MS - 1)).toEqual(id);
    expect(verifyIdentity(secret, header, now + IDENTITY_MAX_AGE_MS + 1)).toBeUndefined();
    expect(verifyIdentity(secret, header, now - IDENTITY_MAX_AGE_MS - 1)).toBeUndefined();
  });
});
