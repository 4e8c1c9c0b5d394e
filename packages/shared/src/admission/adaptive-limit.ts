/**
 * An adaptive concurrency limit in the style of the gradient limit of Netflix's concurrency-limits
 * (pure: the runtime in admission-queue.ts feeds it each finished call's duration). docs/OVERLOAD.md
 * explains when it is used (`ADMISSION_LIMIT=gradient`).
 *
 * - A long-term, exponentially smoothed call duration is compared with the short-term one (the duration
 *   of the call that just finished): gradient = clamp(tolerance × long / short, 0.5, 1). While calls take
 *   no longer than `tolerance` times their long-term duration the gradient is 1 and the limit grows by
 *   its headroom, √limit; when they slow down it shrinks, by at most half.
 * - new = limit × gradient + √limit, then smoothed (limit × (1 − smoothing) + new × smoothing) and held
 *   within [min, max]. The limit in force is its integer part.
 * - A limit that is not used (fewer than half of it running) is left as it is: an idle service does not
 *   grow its limit on calls that never queued.
 * - When the long-term duration is over twice the short-term one (a slowdown that has passed), it is
 *   lowered faster, so that the limit can grow again without waiting for the long mean to forget.
 */

/** How an admission queue sets the calls that run at once (`ADMISSION_LIMIT`). */
export type AdmissionLimit = 'fixed' | 'gradient';

/** An admission queue's gradient limit ranges over [1, GRADIENT_MAX_FACTOR × maxInFlight]. */
export const GRADIENT_MAX_FACTOR = 4;

export interface GradientOptions {
  /** The limit before any call was measured. */
  initial: number;
  min: number;
  max: number;
  /** How much slower than its long-term duration a call may be before the limit shrinks (default 1.5). */
  tolerance?: number;
  /** Weight of a new limit against the previous one (default 0.2). */
  smoothing?: number;
  /** Calls the long-term mean spans (default 600); the first `warmup` (default 10) are a plain mean. */
  longWindow?: number;
  warmup?: number;
}

export interface GradientState {
  /** The limit, before rounding down. */
  estimate: number;
  /** The long-term smoothed duration of a call (ms); 0 until measured. */
  longMs: number;
  /** Calls measured so far. */
  samples: number;
}

/** Above this ratio of long-term to short-term duration, the long-term one is lowered faster. */
const RECOVERY_RATIO = 2;
const RECOVERY_FACTOR = 0.95;
const MIN_GRADIENT = 0.5;

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}

/** The state before any call was measured. */
export function initialGradient(opts: GradientOptions): GradientState {
  if (!(opts.min >= 1) || !(opts.max >= opts.min)) throw new RangeError('expected 1 <= min <= max');
  return { estimate: clamp(opts.initial, opts.min, opts.max), longMs: 0, samples: 0 };
}

/** The limit in force: the estimate's integer part (a rounding error short of an integer is it), within [min, max]. */
export function gradientLimit(state: GradientState, opts: GradientOptions): number {
  return clamp(Math.floor(state.estimate + 1e-9), Math.ceil(opts.min), Math.floor(opts.max));
}

/** The long-term mean with one more call of `durationMs`. */
function longTerm(state: GradientState, opts: GradientOptions, durationMs: number): number {
  const warmup = opts.warmup ?? 10;
  const n = state.samples + 1;
  if (n <= warmup) return state.longMs + (durationMs - state.longMs) / n;
  const factor = 2 / ((opts.longWindow ?? 600) + 1);
  return state.longMs * (1 - factor) + durationMs * factor;
}

/**
 * The state after a call of `durationMs` finished while `inFlight` calls (itself included) were
 * running.
 */
export function nextGradient(
  state: GradientState,
  opts: GradientOptions,
  durationMs: number,
  inFlight: number,
): GradientState {
  if (!Number.isFinite(durationMs) || durationMs < 0) return state;
  const shortMs = Math.max(durationMs, 1e-3);
  let longMs = longTerm(state, opts, durationMs);
  if (longMs / shortMs > RECOVERY_RATIO) longMs *= RECOVERY_FACTOR;
  const samples = state.samples + 1;
  if (inFlight < state.estimate / 2) return { estimate: state.estimate, longMs, samples };
  const gradient = clamp(((opts.tolerance ?? 1.5) * longMs) / shortMs, MIN_GRADIENT, 1);
  const proposed = state.estimate * gradient + Math.sqrt(state.estimate);
  const smoothing = opts.smoothing ?? 0.2;
  const estimate = clamp(state.estimate * (1 - smoothing) + proposed * smoothing, opts.min, opts.max);
  return { estimate, longMs, samples };
}

/** The gradient limit of an admission queue of `maxInFlight`: it starts there, within [1, 4 × it]. */
export function gradientFor(maxInFlight: number): { opts: GradientOptions; state: GradientState } {
  const opts = { initial: maxInFlight, min: 1, max: GRADIENT_MAX_FACTOR * maxInFlight };
  return { opts, state: initialGradient(opts) };
}
