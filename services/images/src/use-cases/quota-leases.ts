/**
 * The images service's quota, spent locally from leases (docs/INTERNAL.md, "quota", leases): a call reserves
 * its units from the subject's current lease (a round trip to quota only when the lease is missing, ended or
 * short), gives back what it did not spend, and its spend is reported to quota after the answer, in batches,
 * as one charge per call. The call's record stays `settling` until quota has recorded it, so a replica that
 * dies leaves nothing unreported: another one finishes the report (finishSettling).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock, Identity, Logger } from '@vision/shared';
import { ApiError, metrics, UnreachableError } from '@vision/shared';
import {
  isLeaseEnded,
  type QuotaLeaseClient,
  recalledUnits,
  type SpendAnswer,
  type SpendOutcome,
  withoutRecall,
} from '../clients/quota-client';
import { LeaseBook, type LeaseNeed } from '../domain/lease-book';
import type { SpentCall } from '../domain/call';

/** Units a call reserved from a lease. */
export interface Reservation {
  leaseId: string;
  units: number;
}

/** One call's spend, to be reported. */
export interface Spend {
  identity: Identity;
  leaseId: string;
  chargeId: string;
  units: number;
  /** The call it is for, handed back with quota's answer. */
  call: SpentCall;
}

export interface QuotaLeaseSettings {
  /** Units asked for beyond a call's own. */
  chunk: number;
  /** How long calls reserve from one lease. */
  windowMs: number;
  /** How long a lease no call uses is kept before it is closed. */
  idleMs: number;
  /** When quota releases the unspent units of a lease its holder never closed. */
  ttlMs: number;
  /** Period of the report loop. */
  flushMs: number;
  /**
   * How long a call waits for units quota recalled from the subject's other leases (another replica's) when the
   * day had none free for it: those leases close once their holders' calls are reported, or once idle.
   */
  recallWaitMs: number;
}

export interface QuotaLeaseDeps {
  client: Pick<QuotaLeaseClient, 'lease' | 'spend' | 'close'>;
  clock: Clock;
  logger: Logger;
  settings: QuotaLeaseSettings;
  /** What becomes of a call once quota recorded its spend (completed, or its images failed when `exhausted`). */
  onRecorded(spend: Spend, outcome: SpendOutcome): Promise<void>;
}

export class QuotaLeases {
  private readonly book: LeaseBook;
  /** One lease request in flight per subject; other calls of the subject wait for it. */
  private readonly asking = new Map<string, Promise<unknown>>();
  private readonly queue = new Map<string, Spend[]>();
  private readonly identities = new Map<string, Identity>();
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private readonly gauges: Array<() => void> = [];

  constructor(private readonly d: QuotaLeaseDeps) {
    this.book = new LeaseBook(d.settings.chunk, d.settings.idleMs);
  }

  /**
   * Reserves `units` for a call; throws 429 OP-QUOTA-DAILY-EXHAUSTED or 503 as a hold would. When the day has no
   * units free but other leases of the subject hold some, quota recalls them and the call asks again as they come
   * back, for `recallWaitMs` at most (never past its deadline): every unit of the day is spent, whichever replica
   * holds it.
   */
  async reserve(identity: Identity, units: number, deadline?: number): Promise<Reservation> {
    const { subject } = identity;
    const waitUntil = Math.min(Date.now() + this.d.settings.recallWaitMs, deadline ?? Infinity);
    let asked: string | undefined;
    for (;;) {
      const take = this.book.take(subject, units, this.now(), asked);
      if ('leaseId' in take) return { leaseId: take.leaseId, units };
      const pending = this.asking.get(subject);
      if (pending) {
        await pending.catch(() => undefined);
        continue;
      }
      const ask = this.askWhileRecalled(identity, take.need, units, waitUntil, deadline);
      this.asking.set(subject, ask);
      try {
        asked = await ask;
      } finally {
        this.asking.delete(subject);
      }
    }
  }

  /**
   * ask, again every report period while quota recalls units from other leases, until `waitUntil`; a lease being
   * grown that has room for the call's `units` again meanwhile (calls on it spent less) is reserved from instead.
   */
  private async askWhileRecalled(
    identity: Identity,
    need: LeaseNeed,
    units: number,
    waitUntil: number,
    deadline?: number,
  ): Promise<string | undefined> {
    // A lease being grown is held meanwhile, as a reservation holds it: not closed while quota answers.
    if (need.leaseId !== undefined) this.book.pin(need.leaseId);
    try {
      for (;;) {
        try {
          return await this.ask(identity, need, deadline);
        } catch (err) {
          const pause = Math.min(this.d.settings.flushMs, 250);
          if (recalledUnits(err) === 0) throw err;
          if (Date.now() + pause >= waitUntil) throw withoutRecall(err as ApiError);
          await sleep(pause);
          if (need.leaseId !== undefined && this.book.fits(need.leaseId, units)) return need.leaseId;
        }
      }
    } finally {
      if (need.leaseId !== undefined) this.book.unpin(need.leaseId, this.now());
    }
  }

  private async ask(identity: Identity, need: LeaseNeed, deadline?: number): Promise<string | undefined> {
    const { windowMs, ttlMs } = this.d.settings;
    const leaseId = need.leaseId ?? `lease-${randomUUID()}`;
    try {
      const a = await this.d.client.lease(
        identity,
        leaseId,
        { minUnits: need.minUnits, maxUnits: need.maxUnits, windowMs, ttlMs },
        deadline,
      );
      // Closed here meanwhile (its close may have reached quota after the grow): the next try takes a new one.
      if (need.leaseId !== undefined && !this.book.has(need.leaseId)) return undefined;
      this.identities.set(a.lease_id, identity);
      this.book.granted(
        identity.subject,
        { leaseId: a.lease_id, units: a.units, usableUntil: Date.parse(a.usable_until) },
        this.now(),
      );
      return a.lease_id;
    } catch (err) {
      // Past its window (clocks differ) or gone: the next try takes a new lease.
      if (need.leaseId !== undefined && isLeaseEnded(err)) this.book.ended(identity.subject, need.leaseId);
      else throw err;
      return undefined;
    }
  }

  /** A call that reserved `r` ends without spending (refused, failed, or nothing succeeded). */
  release(r: Reservation): void {
    this.book.release(r.leaseId, r.units, 0, this.now());
  }

  /**
   * A call that reserved `r` spent `units` (its results are stored, charged as `call.taskId`): reported after
   * the answer.
   */
  spent(identity: Identity, r: Reservation, call: SpentCall, units: number): void {
    if (units === 0) return this.release(r);
    this.book.release(r.leaseId, r.units, units, this.now());
    const batch = this.queue.get(r.leaseId) ?? [];
    batch.push({ identity, leaseId: r.leaseId, chargeId: call.taskId, units, call });
    this.queue.set(r.leaseId, batch);
  }

  /** Reports one spend now and waits for quota's answer (a call found `settling`, its owner gone). */
  async reportNow(spend: Spend): Promise<SpendOutcome> {
    const { outcomes } = await this.d.client.spend(spend.identity, spend.leaseId, [
      { charge_id: spend.chargeId, units: spend.units },
    ]);
    const outcome = outcomes.get(spend.chargeId);
    if (!outcome) throw new Error('quota did not answer for the spend reported');
    return outcome;
  }

  /** Reports what is queued and closes the leases that ended. Never throws; a failed report is tried again. */
  flush(): Promise<void> {
    this.flushing ??= this.flushOnce().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async flushOnce(): Promise<void> {
    const batches = [...this.queue.entries()];
    this.queue.clear();
    await Promise.all(batches.map(([leaseId, spends]) => this.report(leaseId, spends)));
    await Promise.all(this.book.closable(this.now()).map((l) => this.close(l.leaseId)));
  }

  private async report(leaseId: string, spends: Spend[]): Promise<void> {
    let answer: SpendAnswer;
    try {
      answer = await this.d.client.spend(
        spends[0].identity,
        leaseId,
        spends.map((s) => ({ charge_id: s.chargeId, units: s.units })),
      );
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) {
        // Refused for good (cannot happen with a lease this replica took): the calls stay `settling`.
        this.d.logger.error({ err, lease_id: leaseId, calls: spends.length }, 'quota refused a spend report');
        this.book.reported(leaseId, spends.length);
        return;
      }
      const requeued = this.queue.get(leaseId) ?? [];
      this.queue.set(leaseId, [...spends, ...requeued]);
      this.d.logger.warn(
        { err: err instanceof UnreachableError ? err.message : err, lease_id: leaseId, calls: spends.length },
        'quota spend report failed; tried again',
      );
      return;
    }
    const { outcomes, usableUntil } = answer;
    if (usableUntil !== undefined) this.book.window(leaseId, usableUntil);
    for (const s of spends) {
      const outcome = outcomes.get(s.chargeId);
      if (!outcome) continue;
      await this.d.onRecorded(s, outcome).catch((err: unknown) => {
        this.d.logger.warn({ err, task_id: s.chargeId }, 'a recorded spend could not be finished');
      });
    }
    this.book.reported(leaseId, spends.filter((s) => outcomes.has(s.chargeId)).length);
  }

  private async close(leaseId: string): Promise<void> {
    const identity = this.identities.get(leaseId);
    this.identities.delete(leaseId);
    if (!identity) return;
    // A lease left open returns its unspent units at its expiry anyway.
    await this.d.client.close(identity, leaseId).catch((err: unknown) => {
      this.d.logger.warn({ err, lease_id: leaseId }, 'a quota lease could not be closed; it expires');
    });
  }

  private now(): number {
    return this.d.clock.now().getTime();
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.d.settings.flushMs);
    this.timer.unref();
    const unreported = () => [...this.queue.values()].reduce((n, batch) => n + batch.length, 0);
    this.gauges.push(
      metrics.quotaLeasesOpen.addSource(() => [[{}, this.book.size]]),
      metrics.quotaChargesUnreported.addSource(() => [[{}, unreported()]]),
    );
  }

  /**
   * Reports what is queued and closes every lease no call holds (at shutdown, after the last call): their
   * unspent units return to the day now rather than at their expiry. Calls after it take new leases.
   */
  async closeIdle(): Promise<void> {
    await this.flush();
    this.book.retireAll();
    await this.flush();
  }

  /** Stops the loop, reports the last spends and closes the leases (graceful shutdown). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.closeIdle();
    for (const remove of this.gauges.splice(0)) remove();
  }
}
