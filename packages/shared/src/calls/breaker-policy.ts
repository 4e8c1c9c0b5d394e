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
 *   not move it; a backend slower for good does), at least `slowFloorMs`, at most `ceilingMs` (also the
 *   threshold of a kind not measured `minSamples` times yet).
 * - The timeout of a call is twice `slowFactor` times that median, at least `hangMs` and at most
 *   `ceilingMs`; a kind not measured yet gets `hangMs`, not the ceiling.
 * - A backend that answered nothing at all for `hangMs` while a call waited is hung: the breaker opens at
 *   once, whatever the traffic (`heard`, `mark` and `silentSince` tell it; the caller keeps the time).
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
  /** The longest a call may take; the slow threshold of a kind not measured yet. */
  ceilingMs: number;
  /**
   * How long the backend may answer nothing while a call waits before it counts as hung (the breaker opens):
   * the timeout of a kind not measured yet, and the shortest timeout of a measured one.
   */
  hangMs: number;
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
  /** Answers heard from the backend so far (any status): a call compares it at its start and at its end. */
  private answers = 0;

  constructor(private readonly settings: BreakerPolicySettings) {
    this.size = Math.max(1, settings.window, settings.volume);
  }

  /** The slow threshold of `kind` now. */
  slowMs(kind: string): number {
    const { ceilingMs, slowFloorMs } = this.settings;
    const median = this.median(kind);
    if (median === undefined) return ceilingMs;
    return Math.min(ceilingMs, Math.max(slowFloorMs, (this.settings.slowFactor ?? 4) * median));
  }

  /** The timeout of one call of `kind` now (before the caller's deadline is applied). */
  timeoutMs(kind: string): number {
    const { ceilingMs, hangMs } = this.settings;
    const median = this.median(kind);
    const measured = median === undefined ? 0 : 2 * (this.settings.slowFactor ?? 4) * median;
    return Math.min(ceilingMs, Math.max(hangMs, measured));
  }

  /** True once `kind` was measured often enough for its own figures. */
  measured(kind: string): boolean {
    return this.median(kind) !== undefined;
  }

  /** How long a silent backend is waited on before it counts as hung. */
  hangMs(): number {
    return this.settings.hangMs;
  }

  /** The backend answered a call (any status, a refusal included): it is not hung. */
  heard(): void {
    this.answers++;
  }

  /** A mark taken when a call starts, for silentSince. */
  mark(): number {
    return this.answers;
  }

  /** True when the backend answered no call since `mark` was taken. */
  silentSince(mark: number): boolean {
    return this.answers === mark;
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

  /** The median of the measured answers of `kind`, once it was measured `minSamples` times. */
  private median(kind: string): number | undefined {
    const measured = this.samples.get(kind) ?? [];
    if (measured.length < (this.settings.minSamples ?? 5)) return undefined;
    return [...measured].sort((a, b) => a - b)[Math.floor(measured.length / 2)];
  }

  private tripped(): boolean {
    const { volume, errorThresholdPercentage } = this.settings;
    if (this.inARow >= Math.max(1, volume)) return true;
    if (this.outcomes.length < volume) return false;
    const failures = this.outcomes.filter(Boolean).length;
    return (failures / this.outcomes.length) * 100 > errorThresholdPercentage;
  }
}
