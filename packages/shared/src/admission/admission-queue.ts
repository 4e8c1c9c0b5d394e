import { randomBytes } from 'node:crypto';
import { ApiError } from '../contract/errors';
import { metrics } from '../telemetry/metrics';
import { currentService, runInService } from '../telemetry/service-context';
import { REASON } from '../contract/reasons';
import { type QueueView, type Waiting, admit, nextToStart, retryAfterSeconds } from './fair-queue';
import {
  type AdmissionLimit,
  type GradientOptions,
  type GradientState,
  gradientFor,
  gradientLimit,
  nextGradient,
} from './adaptive-limit';
import type { LoadReport } from './load-report';

export type { AdmissionLimit } from './adaptive-limit';
export { LOAD_HEADER, type LoadReport, parseLoadReport } from './load-report';

export interface AdmissionOptions {
  /** Calls that run at once; with the gradient limit, where it starts (docs/OVERLOAD.md). */
  maxInFlight: number;
  /** `fixed` (default): maxInFlight run at once; `gradient`: an adaptive limit (adaptive-limit.ts). */
  limit?: AdmissionLimit;
  /** The longest a call may wait for its turn (ms): one expected to wait longer is refused at once. */
  maxWaitMs: number;
  /**
   * What the bound limits: `wait` (default), the wait for a turn; `answer`, the wait and the call's own
   * time together (its mean and four mean deviations), so that an admitted call is expected to be answered
   * within the bound (the door's).
   */
  bound?: 'wait' | 'answer';
  /** The queue's name in the metrics (`image_calls`, `detections`, `task_creations`). */
  queue: string;
  /** What its calls are, for messages ("the image call"). */
  what: string;
  now?: () => number;
}

export interface EnterOptions {
  /** The caller's deadline (epoch ms): the call waits at most until then, and not at all once it passed. */
  deadline?: number;
  /** Aborted when the caller has gone: a waiting call leaves the queue. */
  signal?: AbortSignal;
}

/** A call's turn: release it when the call ends, whatever its outcome. */
export interface Turn {
  release(): void;
}

/** The refusal of a call the service has no room for (503, reason `overloaded`, with Retry-After). */
export function overloaded(expectedWaitMs: number, what: string): ApiError {
  const seconds = retryAfterSeconds(expectedWaitMs);
  return new ApiError(
    'OP-SYS-UNAVAILABLE',
    `The service is at capacity for ${what}; retry in ${seconds} s`,
    { reason: REASON.overloaded, retry_after_s: seconds },
    { 'Retry-After': String(seconds) },
  );
}

/** The refusal of a call whose caller's deadline passed before it could start (503, `deadline_exceeded`). */
export function deadlineExceeded(what: string): ApiError {
  return new ApiError(
    'OP-SYS-UNAVAILABLE',
    `The deadline of the request passed before ${what} could start`,
    { reason: REASON.deadline_exceeded },
    { 'Retry-After': '1' },
  );
}

interface Entry extends Waiting {
  start: () => void;
  refuse: (err: ApiError) => void;
}

/** Exponentially weighted mean of call durations: recent calls count most. */
const EWMA_WEIGHT = 0.2;
/** The weight of the latest call in the mean deviation of call durations (RFC 6298's RTTVAR, its 1/4). */
const DEVIATION_WEIGHT = 0.25;
/** Mean deviations above the mean that the answer bound allows for a call's own time (RFC 6298's K). */
const ANSWER_DEVIATIONS = 4;

/**
 * A bounded, fair queue in front of work that needs a scarce resource (inference): at most its limit of
 * calls run (maxInFlight, or the adaptive limit of adaptive-limit.ts), the others wait their turn for at
 * most maxWaitMs (or their caller's deadline), and a call that could not start in time is refused at
 * once instead of waiting (fair-queue.ts decides).
 */
export class AdmissionQueue {
  private readonly running = new Map<string, number>();
  private waiting: Entry[] = [];
  private meanServiceMs = 0;
  /** The mean deviation of call durations from meanServiceMs (ms). */
  private deviationMs = 0;
  private seq = 0;
  private readonly now: () => number;
  /** The gradient limit's bounds and state, with `limit: 'gradient'`. */
  private gradient?: { opts: GradientOptions; state: GradientState };
  /** Calls that may run at once now. */
  private slots: number;
  /** The longest a call may wait for its turn now. */
  private maxWaitMs: number;
  /** The service whose metrics it updates, whatever callback releases a turn or ends a wait. */
  private readonly service = currentService();
  /** This queue's id in its load reports (one replica of a service). */
  private readonly replica = randomBytes(4).toString('hex');

  readonly what: string;

  constructor(private readonly opts: AdmissionOptions) {
    this.what = opts.what;
    if (!(opts.maxInFlight >= 1)) throw new RangeError('maxInFlight must be at least 1');
    this.now = opts.now ?? Date.now;
    this.slots = opts.maxInFlight;
    this.maxWaitMs = opts.maxWaitMs;
    if (opts.limit === 'gradient') this.gradient = gradientFor(opts.maxInFlight);
    metrics.admissionLimit.set({ queue: opts.queue }, this.slots);
  }

  /** Calls that may run at once now: maxInFlight, or the gradient limit's current value. */
  limit(): number {
    return this.slots;
  }

  /**
   * Sets the calls that run at once and the longest wait (a fixed limit only: a gradient limit moves by
   * itself). Calls already running keep running; waiting ones start as slots free.
   */
  resize(maxInFlight: number, maxWaitMs: number): void {
    if (!(maxInFlight >= 1)) throw new RangeError('maxInFlight must be at least 1');
    this.maxWaitMs = maxWaitMs;
    if (this.gradient || maxInFlight === this.slots) return;
    this.slots = maxInFlight;
    runInService(this.service, () => {
      metrics.admissionLimit.set({ queue: this.opts.queue }, maxInFlight);
      this.startNext();
    });
  }

  /** What this queue holds now, for the gateway's admission at the door (load-report.ts). */
  report(): LoadReport {
    const { running, waiting } = this.usage();
    return { replica: this.replica, limit: this.slots, maxWaitMs: this.maxWaitMs, running, waiting };
  }

  /** Calls running and waiting now. */
  usage(): { running: number; waiting: number } {
    let running = 0;
    for (const n of this.running.values()) running += n;
    return { running, waiting: this.waiting.length };
  }

  /** Waits for the call's turn; rejects with overloaded() or deadlineExceeded() when it gets none. */
  enter(subject: string, opts: EnterOptions = {}): Promise<Turn> {
    return runInService(this.service, () => this.decide(subject, opts));
  }

  private decide(subject: string, opts: EnterOptions): Promise<Turn> {
    const now = this.now();
    const { queue } = this.opts;
    if (opts.deadline !== undefined && opts.deadline <= now) {
      metrics.admissionShed.inc({ queue, reason: 'deadline' });
      return Promise.reject(deadlineExceeded(this.what));
    }
    const bound = Math.min(this.maxWaitMs, (opts.deadline ?? Infinity) - now) - this.serviceAllowanceMs();
    const decision = admit(this.view(), subject, bound);
    if (decision.kind === 'start') return Promise.resolve(this.begin(subject, now, now));
    if (decision.kind === 'refuse') {
      metrics.admissionShed.inc({ queue, reason: 'overloaded' });
      return Promise.reject(overloaded(decision.expectedWaitMs, this.what));
    }
    if (decision.evict)
      this.drop(decision.evict.id, overloaded(decision.expectedWaitMs, this.what), 'evicted');
    return new Promise<Turn>((resolve, reject) => {
      const id = ++this.seq;
      // A caller's deadline is kept to the millisecond. The queue's own bound is what the admission
      // estimate keeps to; this timer is only the backstop for an estimate gone wrong (a sudden slowdown):
      // dropping a call that waited its bound, after it waited, would answer late what should have been
      // answered at once, so the backstop is twice the bound.
      const byDeadline = opts.deadline !== undefined && opts.deadline - now <= 2 * this.maxWaitMs;
      const timer = setTimeout(
        () =>
          runInService(this.service, () => {
            if (byDeadline) this.drop(id, deadlineExceeded(this.what), 'deadline');
            else this.drop(id, overloaded(this.meanServiceMs, this.what), 'waited');
          }),
        Math.max(0, byDeadline ? (opts.deadline as number) - now : 2 * this.maxWaitMs),
      );
      timer.unref();
      const onAbort = () =>
        runInService(this.service, () => this.drop(id, overloaded(0, this.what), 'client_gone'));
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      const cleanup = () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
      };
      this.waiting.push({
        id,
        subject,
        since: now,
        start: () => {
          cleanup();
          resolve(this.begin(subject, now, this.now()));
        },
        refuse: (err) => {
          cleanup();
          reject(err);
        },
      });
      metrics.admissionQueued.set({ queue }, this.waiting.length);
      if (opts.signal?.aborted) onAbort();
    });
  }

  /** The bound's share for a call's own time: with the answer bound, its mean and four mean deviations (as TCP's
   * retransmission timeout), so that most answers come within the bound, not half of them; else none. */
  private serviceAllowanceMs(): number {
    return this.opts.bound === 'answer' ? this.meanServiceMs + ANSWER_DEVIATIONS * this.deviationMs : 0;
  }

  private view(): QueueView {
    return {
      maxInFlight: this.slots,
      running: this.running,
      waiting: this.waiting,
      meanServiceMs: this.meanServiceMs,
      now: this.now(),
      // The wait the bound allows: with the answer bound, less the call's own time (fair-queue.ts starts the
      // oldest call once it has waited half of it).
      maxWaitMs: Math.max(0, this.maxWaitMs - this.serviceAllowanceMs()),
    };
  }

  private begin(subject: string, queuedAt: number, startedAt: number): Turn {
    const { queue } = this.opts;
    this.running.set(subject, (this.running.get(subject) ?? 0) + 1);
    metrics.admissionInFlight.set({ queue }, this.usage().running);
    metrics.admissionWait.observe({ queue }, (startedAt - queuedAt) / 1000);
    let done = false;
    return {
      release: () => {
        if (done) return;
        done = true;
        runInService(this.service, () => this.finish(subject, startedAt));
      },
    };
  }

  /** A call's turn ended: its time is measured and the next waiting call starts. */
  private finish(subject: string, startedAt: number): void {
    const took = this.now() - startedAt;
    if (this.meanServiceMs === 0) {
      this.meanServiceMs = took;
      this.deviationMs = took / 2;
    } else {
      const off = Math.abs(took - this.meanServiceMs);
      this.deviationMs = (1 - DEVIATION_WEIGHT) * this.deviationMs + DEVIATION_WEIGHT * off;
      this.meanServiceMs = (1 - EWMA_WEIGHT) * this.meanServiceMs + EWMA_WEIGHT * took;
    }
    this.adapt(took);
    const left = (this.running.get(subject) ?? 1) - 1;
    if (left > 0) this.running.set(subject, left);
    else this.running.delete(subject);
    this.startNext();
  }

  /** Feeds a finished call's duration to the gradient limit (before the call leaves the running ones). */
  private adapt(tookMs: number): void {
    if (!this.gradient) return;
    const { opts } = this.gradient;
    this.gradient.state = nextGradient(this.gradient.state, opts, tookMs, this.usage().running);
    const slots = gradientLimit(this.gradient.state, opts);
    if (slots === this.slots) return;
    this.slots = slots;
    metrics.admissionLimit.set({ queue: this.opts.queue }, slots);
  }

  private startNext(): void {
    const { queue } = this.opts;
    for (let next = nextToStart(this.view()); next; next = nextToStart(this.view())) {
      const entry = next as Entry;
      this.waiting = this.waiting.filter((w) => w.id !== entry.id);
      entry.start();
    }
    metrics.admissionQueued.set({ queue }, this.waiting.length);
    metrics.admissionInFlight.set({ queue }, this.usage().running);
  }

  private drop(id: number, err: ApiError, reason: string): void {
    const entry = this.waiting.find((w) => w.id === id);
    if (!entry) return;
    this.waiting = this.waiting.filter((w) => w.id !== id);
    metrics.admissionShed.inc({ queue: this.opts.queue, reason });
    metrics.admissionQueued.set({ queue: this.opts.queue }, this.waiting.length);
    entry.refuse(err);
  }
}
