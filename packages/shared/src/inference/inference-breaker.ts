/**
 * The breaker around the inference backend, shared by every call of InferenceClient (tasks and images):
 * opossum keeps the states (closed, open, half-open after `resetTimeoutMs`, one trial call) and their
 * events; BreakerPolicy (breaker-policy.ts) decides when it opens and how long each call may take
 * (docs/OVERLOAD.md, "The breaker around inference"). opossum's own window is time-based (a backend
 * called less often than its window never opens it) and knows no slow calls: its opening rule is off.
 * - A backend that answers nothing for `hangMs` while a call waits opens the breaker then, without
 *   waiting for the call's timeout or for more failures, and that call ends then, timed out.
 * - Half-open, the first call is the trial; a call that comes while the trial is in flight waits for its
 *   outcome (sent once the trial closed the breaker, refused once it opened it again) instead of being
 *   refused beside a trial that succeeds.
 */
import CircuitBreaker from 'opossum';
import { trace } from '@opentelemetry/api';
import { ApiError } from '../contract/errors';
import type { Logger } from '../telemetry/logger';
import { REASON } from '../contract/reasons';
import { BreakerPolicy, type CallEnd } from '../calls/breaker-policy';
import { observeBreaker, recordBreakerRefusal } from '../calls/breaker-telemetry';
import {
  type CallOptions,
  type CallResult,
  type ServiceClient,
  UnreachableError,
} from '../calls/service-client';

export interface BreakerSettings {
  /** The longest one call may take. */
  timeoutMs: number;
  /**
   * How long the backend may answer nothing while a call waits before the breaker opens; also the timeout of
   * a kind of call not measured yet, and the shortest timeout of a measured one.
   */
  hangMs: number;
  /** Share of failed calls among the last `window` (percent) above which it opens. */
  errorThresholdPercentage: number;
  /** How long it stays open before one probe call may go through (half-open). */
  resetTimeoutMs: number;
  /** Calls in the window before the share counts; this many failures in a row open it too. */
  volumeThreshold: number;
  /** Calls the count-based window keeps (default 10). */
  window?: number;
  /** The lowest slow threshold (default timeoutMs: only calls that time out count as failed). */
  slowFloorMs?: number;
}

/** A call cut short by its caller's deadline, not by its own timeout: no failure of the backend. */
export class DeadlineCut extends Error {
  constructor(readonly waitedMs: number) {
    super(`the caller's deadline passed after ${waitedMs} ms`);
    this.name = 'DeadlineCut';
  }
}

/** Thrown inside the breaker for answers that count as failures (5xx other than a shed). */
export class BackendFailure extends Error {
  constructor(readonly status: number) {
    super(`inference answered ${status}`);
    this.name = 'BackendFailure';
  }
}

type Fire = (kind: string, path: string, opts: CallOptions) => Promise<CallResult>;

/** The half-open trial in flight: `done` resolves once it ended or the breaker opened again. */
interface Trial {
  done: Promise<void>;
  end: () => void;
}

function startTrial(): Trial {
  let end = () => undefined as void;
  const done = new Promise<void>((resolve) => {
    end = resolve;
  });
  return { done, end };
}

export class InferenceBreaker {
  readonly breaker: CircuitBreaker<Parameters<Fire>, CallResult>;
  readonly policy: BreakerPolicy;
  private openedAt = 0;
  private trial?: Trial;
  /** Why the breaker opens next (logged with the opening). */
  private why = 'the half-open trial failed';

  constructor(
    client: ServiceClient,
    private readonly settings: BreakerSettings,
    logger: Logger,
    /** Answers that are the backend refusing work for want of room or time: neither failures nor measured. */
    isShed: (r: CallResult) => boolean,
  ) {
    this.policy = new BreakerPolicy({
      window: settings.window ?? 10,
      errorThresholdPercentage: settings.errorThresholdPercentage,
      volume: settings.volumeThreshold,
      slowFloorMs: settings.slowFloorMs ?? settings.timeoutMs,
      ceilingMs: settings.timeoutMs,
      hangMs: settings.hangMs,
    });
    const fire: Fire = async (kind, path, opts) => {
      const bound = this.policy.timeoutMs(kind);
      const left = opts.deadline !== undefined ? opts.deadline - Date.now() : Number.POSITIVE_INFINITY;
      const byDeadline = left < bound;
      const timeoutMs = Math.max(1, Math.floor(Math.min(bound, left)));
      const started = performance.now();
      const waited = () => Math.round(performance.now() - started);
      const attributes = {
        'inference.call': kind,
        'inference.attempt': 1,
        // Where the timeout came from: the caller's deadline, the hang bound of a kind not measured yet, the
        // measured calls, or the ceiling.
        'timeout.source': byDeadline
          ? 'deadline'
          : !this.policy.measured(kind)
            ? 'unmeasured'
            : bound < settings.timeoutMs
              ? 'measured'
              : 'ceiling',
        'breaker.slow_ms': this.policy.slowMs(kind),
      };
      const mark = this.policy.mark();
      // The backend silent for hangMs while this call waits: hung, whatever the call's own timeout. The breaker
      // opens, and the call ends then too: its caller waits no longer than the callers it refuses from now on.
      const hung = new AbortController();
      const watch = setTimeout(() => {
        if (this.openIfSilent(mark, kind)) hung.abort();
      }, this.policy.hangMs());
      watch.unref();
      let r: CallResult;
      try {
        r = await client.call(path, { ...opts, timeoutMs, attributes, hung: hung.signal });
      } catch (err) {
        clearTimeout(watch);
        if (err instanceof UnreachableError && err.timedOut && byDeadline && !hung.signal.aborted) {
          this.settle(kind, 'ignored', waited());
          throw new DeadlineCut(waited());
        }
        this.settle(kind, 'failed', waited());
        // Timed out after at least hangMs (the watch and the timeout may fire in either order).
        if (err instanceof UnreachableError && err.timedOut && timeoutMs >= this.policy.hangMs())
          this.openIfSilent(mark, kind);
        throw err;
      }
      clearTimeout(watch);
      this.policy.heard();
      const end: CallEnd = isShed(r) ? 'ignored' : r.status >= 500 ? 'failed' : 'answered';
      this.settle(kind, end, waited());
      if (end === 'failed') throw new BackendFailure(r.status);
      return r;
    };
    this.breaker = new CircuitBreaker(fire, {
      // The timeout of each call is BreakerPolicy's (ServiceClient applies it), and so is the opening rule.
      timeout: false,
      errorThresholdPercentage: 100,
      volumeThreshold: Number.MAX_SAFE_INTEGER,
      resetTimeout: settings.resetTimeoutMs,
      // A deadline cut tells nothing of the backend, except during the probe: it must answer to close.
      errorFilter: (err: unknown) => err instanceof DeadlineCut && !this.breaker.halfOpen,
      name: 'inference',
    });
    observeBreaker(this.breaker, 'inference');
    this.breaker.on('open', () => {
      this.openedAt = Date.now();
      logger.warn({ why: this.why }, 'inference breaker opened');
      this.why = 'the half-open trial failed';
      this.endTrial();
    });
    this.breaker.on('halfOpen', () => logger.info('inference breaker half-open'));
    this.breaker.on('close', () => {
      this.policy.reset();
      logger.info('inference breaker closed');
    });
  }

  /**
   * One call through the breaker. Half-open, the first call is the trial, sent as its caller asked; the
   * calls that come meanwhile wait for its outcome (at most its timeout, or `hangMs` of silence).
   */
  async fire(kind: string, path: string, opts: CallOptions): Promise<CallResult> {
    while (this.trial) await this.trial.done;
    if (!this.breaker.pendingClose) return this.breaker.fire(kind, path, opts);
    const trial = startTrial();
    this.trial = trial;
    try {
      return await this.breaker.fire(kind, path, opts);
    } finally {
      if (this.trial === trial) this.endTrial();
    }
  }

  /** True while the breaker refuses calls (open, not half-open). */
  isOpen(): boolean {
    return this.breaker.opened;
  }

  /**
   * 503 OP-TASK-BREAKER-OPEN (`breaker_open`) for `what` refused because the breaker is open, with a
   * Retry-After of the time left until the probe call (at least 1 s); marks the current span.
   */
  refusal(what: string): ApiError {
    recordBreakerRefusal('inference');
    const left = this.openedAt + this.settings.resetTimeoutMs - Date.now();
    return new ApiError(
      'OP-TASK-BREAKER-OPEN',
      `The inference backend is failing; ${what} are not accepted for now`,
      { reason: REASON.breaker_open },
      { 'Retry-After': String(Math.max(1, Math.ceil(left / 1000))) },
    );
  }

  private settle(kind: string, end: CallEnd, waitedMs: number): void {
    const { slow, open } = this.policy.record(kind, end, waitedMs);
    if (slow) trace.getActiveSpan()?.setAttributes({ 'breaker.slow_call': true, 'inference.call': kind });
    if (open) this.open('failed calls', kind);
  }

  /** Opens the breaker when the backend answered nothing since `mark` (taken when a call of `kind` started). */
  private openIfSilent(mark: number, kind: string): boolean {
    if (!this.policy.silentSince(mark)) return false;
    this.open(`no answer for ${this.policy.hangMs()} ms`, kind);
    return true;
  }

  private open(why: string, kind: string): void {
    if (this.breaker.opened) return;
    this.why = `${why} (${kind})`;
    this.breaker.open();
  }

  private endTrial(): void {
    const trial = this.trial;
    this.trial = undefined;
    trial?.end();
  }
}
