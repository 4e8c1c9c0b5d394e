/**
 * When the breaker around a backend opens, and how long one call to it may take (docs/OVERLOAD.md,
 * "The breaker around inference"). Pure: no timers and no I/O; the caller measures each call and
 * reports how it ended.
 *
 * - The window is the last `window` calls, whatever time they took (count-based), so that a backend
 *   called rarely opens the breaker as soon as one called often: it opens when, with at least `volume`
 *   calls in the window, more than `errorThresholdPercentage` of them failed, or when the last `volume`
 *   calls all failed.
 * - A call that answered, but later than the slow threshold of its kind, counts as failed. The slow
 *   threshold is `slowFactor` times the median of the kind's last measured answers (a few slow answers do
 *   not move it; a backend slower for good does), at least `slowFloorMs`; the timeout of a call is twice it. Both are at most `ceilingMs`, which is also both
 *   figures of a kind not measured `minSamples` times yet.
 */

export interface BreakerPolicySettings {
  /** Calls the window keeps (at least `volume`). */
  window: number;
  /** Share of failed calls in the window (percent) above which the breaker opens. */
  errorThresholdPercentage: number;
  /** Calls the window must hold before the share counts; this many failures in a row open it too. */
  volume: number;
  /** The lowest slow threshold. */
  slowFloorMs: number;
  /** The longest a call may take; the slow threshold and the timeout of a kind not measured yet. */
  ceilingMs: number;
  /** Slow threshold = slowFactor x the median of the kind's measured answers (default 4). */
  slowFactor?: number;
  /** Answers of a kind measured before its own figures apply (default 5). */
  minSamples?: number;
}

/** How one call ended: answered (by the backend, whatever the status), failed, or not the backend's doing. */
export type CallEnd = 'answered' | 'failed' | 'ignored';

export interface Recorded {
  /** The call counted as failed because it answered later than its slow threshold. */
  slow: boolean;
  /** The window now says: open the breaker. */
  open: boolean;
}

/** Measured answers kept per kind of call. */
const SAMPLES = 20;

export class BreakerPolicy {
  /** The window, oldest first: true for a failed call. */
  private outcomes: boolean[] = [];
  private inARow = 0;
  private readonly samples = new Map<string, number[]>();
  private readonly size: number;

  constructor(private readonly settings: BreakerPolicySettings) {
    this.size = Math.max(1, settings.window, settings.volume);
  }

  /** The slow threshold of `kind` now. */
  slowMs(kind: string): number {
    const { ceilingMs, slowFloorMs } = this.settings;
    const measured = this.samples.get(kind) ?? [];
    if (measured.length < (this.settings.minSamples ?? 5)) return ceilingMs;
    const median = [...measured].sort((a, b) => a - b)[Math.floor(measured.length / 2)];
    return Math.min(ceilingMs, Math.max(slowFloorMs, (this.settings.slowFactor ?? 4) * median));
  }

  /** The timeout of one call of `kind` now (before the caller's deadline is applied). */
  timeoutMs(kind: string): number {
    return Math.min(this.settings.ceilingMs, 2 * this.slowMs(kind));
  }

  /** Records the end of one call of `kind` that took `durationMs`. */
  record(kind: string, end: CallEnd, durationMs: number): Recorded {
    if (end === 'ignored') return { slow: false, open: false };
    let failed = end === 'failed';
    let slow = false;
    if (!failed) {
      slow = durationMs > this.slowMs(kind);
      failed = slow;
      const measured = this.samples.get(kind) ?? [];
      measured.push(durationMs);
      if (measured.length > SAMPLES) measured.shift();
      this.samples.set(kind, measured);
    }
    this.outcomes.push(failed);
    if (this.outcomes.length > this.size) this.outcomes.shift();
    this.inARow = failed ? this.inARow + 1 : 0;
    return { slow, open: failed && this.tripped() };
  }

  /** Forgets the window (the breaker closed again); the measured answers are kept. */
  reset(): void {
    this.outcomes = [];
    this.inARow = 0;
  }

  private tripped(): boolean {
    const { volume, errorThresholdPercentage } = this.settings;
    if (this.inARow >= Math.max(1, volume)) return true;
    if (this.outcomes.length < volume) return false;
    const failures = this.outcomes.filter(Boolean).length;
    return (failures / this.outcomes.length) * 100 > errorThresholdPercentage;
  }
}
