/** The pure rule of the one idempotency claim mechanism (video-task creation and image detection). */
import { type ClaimState, decideClaim, leaseUntil, renewEveryMs } from '../../src';

const now = new Date('2026-01-01T00:00:00Z');
const later = new Date(now.getTime() + 1000);
const earlier = new Date(now.getTime() - 1000);
const claim = (state: ClaimState, lease: Date, fingerprint = 'a') => ({
  fingerprint,
  state,
  leaseUntil: lease,
});

describe('decideClaim', () => {
  it('another meaning under the key is a mismatch, whatever the state and lease', () => {
    for (const state of ['running', 'settling', 'completed'] as const)
      for (const lease of [earlier, now, later])
        expect(decideClaim(claim(state, lease), ['b'], now)).toBe('mismatch');
  });

  it('replays a completed claim, lease or not, and a settling one whose owner is alive', () => {
    expect(decideClaim(claim('completed', earlier), ['a'], now)).toBe('replay');
    expect(decideClaim(claim('completed', later), ['a'], now)).toBe('replay');
    expect(decideClaim(claim('settling', later), ['a'], now)).toBe('replay');
  });

  it('waits for a live owner, takes over a dead one, finishes a dead settler', () => {
    expect(decideClaim(claim('running', later), ['a'], now)).toBe('wait');
    expect(decideClaim(claim('running', earlier), ['a'], now)).toBe('take_over');
    expect(decideClaim(claim('settling', earlier), ['a'], now)).toBe('finish');
  });

  it('a claim holding an earlier fingerprint of the same meaning is that meaning; any other is a mismatch', () => {
    expect(decideClaim(claim('completed', later, 'old'), ['a', 'old'], now)).toBe('replay');
    expect(decideClaim(claim('running', earlier, 'old'), ['a', 'old'], now)).toBe('take_over');
    expect(decideClaim(claim('completed', later, 'other'), ['a', 'old'], now)).toBe('mismatch');
  });

  it('a lease that ends exactly now has lapsed', () => {
    expect(decideClaim(claim('running', now), ['a'], now)).toBe('take_over');
    expect(decideClaim(claim('settling', now), ['a'], now)).toBe('finish');
  });
});

describe('lease', () => {
  it('ends leaseMs after now and is renewed three times per lease (at least every 250 ms)', () => {
    expect(leaseUntil(now, 60_000).getTime() - now.getTime()).toBe(60_000);
    expect(renewEveryMs(60_000)).toBe(20_000);
    expect(renewEveryMs(300)).toBe(250);
  });
});
