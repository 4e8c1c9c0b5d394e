import { BreakerPolicy, type BreakerPolicySettings } from '../../src/calls/breaker-policy';

const SETTINGS: BreakerPolicySettings = {
  window: 10,
  errorThresholdPercentage: 50,
  volume: 3,
  slowFloorMs: 500,
  ceilingMs: 10_000,
  hangMs: 1000,
};

/** A policy whose `detect` calls were measured `n` times at `ms` each. */
function measured(n: number, ms: number, settings = SETTINGS): BreakerPolicy {
  const p = new BreakerPolicy(settings);
  for (let i = 0; i < n; i++) p.record('detect', 'answered', ms);
  return p;
}

describe('BreakerPolicy: timeouts from measured calls', () => {
  it('gives a kind not measured yet the hang bound as its timeout, not the ceiling', () => {
    const p = measured(4, 50);
    // Its slow threshold is the ceiling: only a call that gets no answer in time counts as failed.
    expect(p.slowMs('detect')).toBe(10_000);
    expect(p.timeoutMs('detect')).toBe(1000);
    expect(p.timeoutMs('scenes')).toBe(1000);
    expect([p.measured('detect'), measured(5, 50).measured('detect')]).toEqual([false, true]);
  });

  it('gives a measured kind 8 x its median as its timeout, at least the hang bound', () => {
    expect(measured(5, 50).timeoutMs('detect')).toBe(1000);
    expect(measured(5, 300).timeoutMs('detect')).toBe(2400);
    // Without a slow floor below the ceiling (only timeouts fail), the timeout still follows the measure.
    const noFloor = { ...SETTINGS, slowFloorMs: 10_000 };
    expect(measured(5, 50, noFloor).timeoutMs('detect')).toBe(1000);
    expect(measured(5, 300, noFloor).timeoutMs('detect')).toBe(2400);
  });

  it('derives the slow threshold from the median of the measured answers, at least the floor', () => {
    expect(measured(5, 50).slowMs('detect')).toBe(500);
    expect(measured(5, 50).timeoutMs('detect')).toBe(1000);
    const p = measured(6, 200);
    for (let i = 0; i < 5; i++) p.record('detect', 'answered', 5000);
    // The median of six 200 ms and five 5 s answers is 200 ms: 4 x 200.
    expect(p.slowMs('detect')).toBe(800);
    expect(measured(10, 400).slowMs('detect')).toBe(1600);
    expect(measured(10, 400).timeoutMs('detect')).toBe(3200);
  });

  it('never goes above the ceiling', () => {
    expect(measured(10, 4000).slowMs('detect')).toBe(10_000);
    expect(measured(10, 2000).timeoutMs('detect')).toBe(10_000);
  });

  it('keeps one figure per kind of call', () => {
    const p = measured(5, 400);
    expect(p.timeoutMs('detect')).toBe(3200);
    expect(p.timeoutMs('scenes')).toBe(1000);
  });
});

describe('BreakerPolicy: when it opens', () => {
  it('opens after `volume` failures in a row, however seldom the calls come', () => {
    const p = measured(5, 50);
    expect(p.record('detect', 'failed', 1000).open).toBe(false);
    expect(p.record('detect', 'failed', 1000).open).toBe(false);
    expect(p.record('detect', 'failed', 1000).open).toBe(true);
  });

  it('counts an answer later than the slow threshold as a failure', () => {
    const p = measured(20, 50);
    expect(p.record('detect', 'answered', 400)).toEqual({ slow: false, open: false });
    expect(p.record('detect', 'answered', 900)).toEqual({ slow: true, open: false });
    expect(p.record('detect', 'answered', 950)).toEqual({ slow: true, open: false });
    expect(p.record('detect', 'answered', 990)).toEqual({ slow: true, open: true });
  });

  it('measures slow answers too: a backend that became slower for good moves its threshold', () => {
    const p = measured(20, 50);
    for (let i = 0; i < 20; i++) p.record('detect', 'answered', 1000);
    expect(p.slowMs('detect')).toBe(4000);
    expect(p.record('detect', 'answered', 1000).slow).toBe(false);
  });

  it('opens when more than the share of the window failed, not at the share itself', () => {
    const p = new BreakerPolicy({ ...SETTINGS, volume: 4 });
    const ends = ['answered', 'failed', 'answered', 'failed', 'answered', 'failed'] as const;
    for (const e of ends) expect(p.record('submit', e, 10).open).toBe(false);
    // 3 of 6 failed: at the share. One more: 4 of 7.
    expect(p.record('submit', 'failed', 10).open).toBe(true);
  });

  it('needs `volume` calls in the window before the share counts', () => {
    const p = new BreakerPolicy({ ...SETTINGS, volume: 5 });
    expect(p.record('submit', 'answered', 10).open).toBe(false);
    expect(p.record('submit', 'failed', 10).open).toBe(false);
    expect(p.record('submit', 'failed', 10).open).toBe(false);
    // 3 of 4 failed, but only 4 calls: not yet; the fifth (failed) makes 4 of 5.
    expect(p.record('submit', 'failed', 10).open).toBe(false);
    expect(p.record('submit', 'failed', 10).open).toBe(true);
  });

  it('forgets the oldest calls of a full window', () => {
    const p = new BreakerPolicy({ ...SETTINGS, window: 4, volume: 4 });
    for (let i = 0; i < 3; i++) p.record('submit', 'failed', 10);
    for (let i = 0; i < 4; i++) expect(p.record('submit', 'answered', 10).open).toBe(false);
    // The three failures left the window: one failure of four is under the share.
    expect(p.record('submit', 'failed', 10).open).toBe(false);
  });

  it('does not count an ignored call (a shed answer, a deadline cut) either way', () => {
    const p = measured(5, 50);
    p.record('detect', 'failed', 1000);
    p.record('detect', 'failed', 1000);
    expect(p.record('detect', 'ignored', 5000)).toEqual({ slow: false, open: false });
    expect(p.record('detect', 'failed', 1000).open).toBe(true);
    // Nor is an ignored call measured.
    expect(p.timeoutMs('detect')).toBe(1000);
  });

  it('starts an empty window after reset, keeping the measured figures', () => {
    const p = measured(5, 50);
    for (let i = 0; i < 3; i++) p.record('detect', 'failed', 1000);
    p.reset();
    expect(p.record('detect', 'failed', 1000).open).toBe(false);
    expect(p.timeoutMs('detect')).toBe(1000);
  });
});

describe('BreakerPolicy: a backend that answers nothing', () => {
  it('is silent since a mark until it answers any call', () => {
    const p = measured(5, 50);
    const mark = p.mark();
    expect(p.silentSince(mark)).toBe(true);
    // A failed call without an answer (a timeout) is no answer.
    p.record('detect', 'failed', 1000);
    expect(p.silentSince(mark)).toBe(true);
    p.heard();
    expect(p.silentSince(mark)).toBe(false);
    expect(p.silentSince(p.mark())).toBe(true);
    expect(p.hangMs()).toBe(1000);
  });
});
