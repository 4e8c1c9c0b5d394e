import { randomUUID } from 'node:crypto';
import {
  ApiError,
  type Clock,
  type Knex,
  affectedRows,
  invalidRequest,
  notFound,
  TOPICS,
} from '@vision/shared';
import { type Day, dayOf, nextResetAt, secondsUntilReset } from '../domain/day';
import { quotaEvent, type QuotaEventType } from '../domain/events';
import {
  decideSettle,
  fits,
  type HoldStatus,
  type Kind,
  KINDS,
  remaining,
  type Usage,
} from '../domain/ledger';
import { type Limits, limitFor } from '../domain/limits';

type Trx = Knex.Transaction;

export interface LedgerOptions {
  knex: Knex;
  clock: Clock;
  limits: Limits;
  /** Default lifetime of a hold when the caller gives no ttl_ms. */
  holdTtlMs: number;
  /** Called after a transaction that wrote outbox rows has committed (wakes the relay). */
  onCommit?: () => void;
}

/** The state of one kind for one day, as the public read and 429 details show it. */
export interface DayUsage extends Usage {
  remaining: number;
  day: Day;
  resets_at: string;
}

/** Current-day figures attached to charge and hold answers (the tasks service turns them into RateLimit headers). */
export interface RateFigures {
  limit: number;
  remaining: number;
  resets_at: string;
}

export interface ChargeView extends RateFigures {
  charge_id: string;
  kind: Kind;
  units: number;
  day: Day;
  status: 'charged' | 'refunded';
}

export interface RefundView {
  charge_id: string;
  day: Day;
  status: 'refunded';
}

export interface HoldView extends RateFigures {
  hold_id: string;
  kind: Kind;
  units: number;
  day: Day;
  expires_at: string;
  status: HoldStatus;
}

export interface SettleView {
  hold_id: string;
  day: Day;
  units: number;
  status: 'settled';
}

interface ChargeRow {
  subject: string;
  charge_id: string;
  kind: Kind;
  units: number;
  day: string;
  status: 'charged' | 'refunded';
}

interface HoldRow {
  subject: string;
  hold_id: string;
  kind: Kind;
  units: number;
  day: string;
  status: HoldStatus;
  expires_at: Date | string;
  settled_units: number | null;
}

const toDate = (v: Date | string): Date => (v instanceof Date ? v : new Date(v));

/** Units of the row a refund of an unknown charge id leaves (real charges have at least 1 unit). */
const TOMBSTONE_UNITS = 0;
const isTombstone = (row: ChargeRow): boolean => Number(row.units) === TOMBSTONE_UNITS;

/**
 * The daily ledgers. Every change of a (subject, kind, day) runs in one transaction that first locks
 * that day's counter row (`SELECT ... FOR UPDATE`), then reads `used` and the live holds, then writes
 * the change and its outbox event. Concurrent requests of one day are therefore serialised on
 * Postgres, and can never push the day past its limit; PGlite has a single connection, so there the
 * transactions are serialised anyway. The current time is read after the lock is granted, so a
 * transaction never judges a hold's expiry with an instant older than the one of the transaction
 * before it.
 */
export class QuotaLedger {
  constructor(private readonly opts: LedgerOptions) {}

  private get knex(): Knex {
    return this.opts.knex;
  }

  private now(): Date {
    return this.opts.clock.now();
  }

  limitOf(subject: string, kind: Kind): number {
    return limitFor(this.opts.limits, subject, kind);
  }

  /** Inserts the counter row if missing and locks it; returns `used`. */
  private async lockCounter(trx: Trx, subject: string, kind: Kind, day: Day): Promise<number> {
    await trx('counters')
      .insert({ subject, kind, day, used: 0 })
      .onConflict(['subject', 'kind', 'day'])
      .ignore();
    const row = (await trx('counters').where({ subject, kind, day }).forUpdate().first('used')) as
      { used: number } | undefined;
    if (!row) throw new Error('quota counter row vanished');
    return Number(row.used);
  }

  private async heldUnits(q: Knex | Trx, subject: string, kind: Kind, day: Day, now: Date): Promise<number> {
    const row = (await q('holds')
      .where({ subject, kind, day, status: 'held' })
      .andWhere('expires_at', '>', now)
      .sum({ held: 'units' })
      .first()) as { held: string | number | null } | undefined;
    return Number(row?.held ?? 0);
  }

  private async usedUnits(q: Knex | Trx, subject: string, kind: Kind, day: Day): Promise<number> {
    const row = (await q('counters').where({ subject, kind, day }).first('used')) as
      { used: number } | undefined;
    return Number(row?.used ?? 0);
  }

  private async usageOf(q: Knex | Trx, subject: string, kind: Kind, now: Date): Promise<DayUsage> {
    const day = dayOf(now);
    const used = await this.usedUnits(q, subject, kind, day);
    const held = await this.heldUnits(q, subject, kind, day, now);
    const u = { limit: this.limitOf(subject, kind), used, held };
    return { ...u, remaining: remaining(u), day, resets_at: nextResetAt(now) };
  }

  /** Today's figures for one subject, both kinds. */
  async usage(subject: string): Promise<Record<Kind, DayUsage>> {
    const now = this.now();
    const [video, image] = await Promise.all(KINDS.map((k) => this.usageOf(this.knex, subject, k, now)));
    return { video, image };
  }

  private async rateFigures(q: Knex | Trx, subject: string, kind: Kind): Promise<RateFigures> {
    const u = await this.usageOf(q, subject, kind, this.now());
    return { limit: u.limit, remaining: u.remaining, resets_at: u.resets_at };
  }

  private exhausted(kind: Kind, usage: Usage, now: Date, extra?: Record<string, unknown>): ApiError {
    const resetsAt = nextResetAt(now);
    return new ApiError(
      'OP-QUOTA-DAILY-EXHAUSTED',
      `Daily ${kind} quota exhausted; it resets at 00:00 (UTC+8)`,
      {
        kind,
        limit: usage.limit,
        used: usage.used,
        held: usage.held,
        remaining: remaining(usage),
        resets_at: resetsAt,
        ...extra,
      },
      { 'Retry-After': String(secondsUntilReset(now)) },
    );
  }

  private async emit(
    trx: Trx,
    type: QuotaEventType,
    subject: string,
    kind: Kind,
    units: number,
    day: Day,
    at: Date,
  ) {
    const event = quotaEvent(randomUUID(), type, subject, kind, units, day, at);
    await trx('outbox').insert({
      topic: TOPICS.quotaEvents,
      key: subject,
      payload: JSON.stringify(event),
      created_at: at,
    });
  }

  private async transaction<T>(fn: (trx: Trx) => Promise<T>): Promise<T> {
    const result = await this.knex.transaction(fn);
    this.opts.onCommit?.();
    return result;
  }

  /** Charges `units` to today. Answers `created: false` with the stored charge when `chargeId` exists. */
  async charge(
    subject: string,
    chargeId: string,
    kind: Kind,
    units: number,
  ): Promise<{ created: boolean; charge: ChargeView }> {
    const day = dayOf(this.now());
    const created = await this.transaction(async (trx) => {
      // The insert comes first: a concurrent request with the same id waits on the key until this
      // transaction ends, then finds the row (or inserts it if this one rolled back).
      const inserted = await trx('charges')
        .insert({
          subject,
          charge_id: chargeId,
          kind,
          units,
          day,
          status: 'charged',
          charged_at: this.now(),
        })
        .onConflict(['subject', 'charge_id'])
        .ignore()
        .returning('charge_id');
      if (inserted.length === 0) return false;
      const used = await this.lockCounter(trx, subject, kind, day);
      const now = this.now();
      const usage = {
        limit: this.limitOf(subject, kind),
        used,
        held: await this.heldUnits(trx, subject, kind, day, now),
      };
      if (!fits(usage, units)) throw this.exhausted(kind, usage, now);
      await trx('counters').where({ subject, kind, day }).increment('used', units);
      await this.emit(trx, 'charged', subject, kind, units, day, now);
      return true;
    });
    const row = (await this.knex('charges').where({ subject, charge_id: chargeId }).first()) as
      ChargeRow | undefined;
    if (!row) throw new Error('charge row missing after commit');
    if (isTombstone(row)) {
      // Refunded before it arrived: answered as refunded, nothing consumed.
      const rate = await this.rateFigures(this.knex, subject, kind);
      return {
        created: false,
        charge: { charge_id: chargeId, kind, units, day: row.day, status: 'refunded', ...rate },
      };
    }
    if (!created && (row.kind !== kind || row.units !== units))
      throw invalidRequest(
        'charge_id was already used for another kind or number of units',
        'charge_id_conflict',
        {
          charge_id: chargeId,
          kind: row.kind,
          units: row.units,
        },
      );
    const rate = await this.rateFigures(this.knex, subject, row.kind);
    return {
      created,
      charge: {
        charge_id: row.charge_id,
        kind: row.kind,
        units: row.units,
        day: row.day,
        status: row.status,
        ...rate,
      },
    };
  }

  /**
   * Returns a charge's units to the day it was charged on. A second refund changes nothing. A refund
   * of an unknown id answers 404 but leaves a tombstone (a `refunded` row of 0 units), so a charge
   * with that id still in flight (a caller's timed-out charge) is answered `refunded` when it lands
   * and consumes nothing. If that charge commits while the refund waits on the key, it is refunded.
   */
  async refund(subject: string, chargeId: string): Promise<RefundView> {
    const view = await this.transaction(async (trx): Promise<RefundView | undefined> => {
      const find = async () =>
        (await trx('charges').where({ subject, charge_id: chargeId }).forUpdate().first()) as
          ChargeRow | undefined;
      let row = await find();
      if (!row) {
        const now = this.now();
        const inserted = await trx('charges')
          .insert({
            subject,
            charge_id: chargeId,
            kind: 'video',
            units: TOMBSTONE_UNITS,
            day: dayOf(now),
            status: 'refunded',
            charged_at: now,
            refunded_at: now,
          })
          .onConflict(['subject', 'charge_id'])
          .ignore()
          .returning('charge_id');
        if (inserted.length > 0) return undefined;
        // A concurrent charge with this id committed while the insert waited on the key.
        row = await find();
        if (!row) throw new Error('charge row missing after key conflict');
      }
      if (isTombstone(row)) return undefined;
      if (row.status === 'refunded') return { charge_id: chargeId, day: row.day, status: 'refunded' };
      await this.lockCounter(trx, subject, row.kind, row.day);
      const now = this.now();
      await trx('counters')
        .where({ subject, kind: row.kind, day: row.day })
        .update({ used: trx.raw('greatest(used - ?, 0)', [row.units]) });
      await trx('charges')
        .where({ subject, charge_id: chargeId })
        .update({ status: 'refunded', refunded_at: now });
      await this.emit(trx, 'refunded', subject, row.kind, row.units, row.day, now);
      return { charge_id: chargeId, day: row.day, status: 'refunded' };
    });
    if (!view) throw notFound('No such charge');
    return view;
  }

  /** Holds `units` of today until settled or `ttlMs` has passed. */
  async hold(
    subject: string,
    holdId: string,
    kind: Kind,
    units: number,
    ttlMs?: number,
  ): Promise<{ created: boolean; hold: HoldView }> {
    const start = this.now();
    const day = dayOf(start);
    const created = await this.transaction(async (trx) => {
      const inserted = await trx('holds')
        .insert({
          subject,
          hold_id: holdId,
          kind,
          units,
          day,
          status: 'held',
          created_at: start,
          expires_at: new Date(start.getTime() + (ttlMs ?? this.opts.holdTtlMs)),
        })
        .onConflict(['subject', 'hold_id'])
        .ignore()
        .returning('hold_id');
      if (inserted.length === 0) return false;
      const used = await this.lockCounter(trx, subject, kind, day);
      const now = this.now();
      // The new hold is part of the sum already (same transaction); take it out to judge the fit.
      const held = (await this.heldUnits(trx, subject, kind, day, now)) - units;
      const usage = { limit: this.limitOf(subject, kind), used, held: Math.max(0, held) };
      if (!fits(usage, units)) throw this.exhausted(kind, usage, now);
      await this.emit(trx, 'held', subject, kind, units, day, now);
      return true;
    });
    const row = (await this.knex('holds').where({ subject, hold_id: holdId }).first()) as HoldRow | undefined;
    if (!row) throw new Error('hold row missing after commit');
    if (!created && (row.kind !== kind || row.units !== units))
      throw invalidRequest(
        'hold_id was already used for another kind or number of units',
        'hold_id_conflict',
        {
          hold_id: holdId,
          kind: row.kind,
          units: row.units,
        },
      );
    const rate = await this.rateFigures(this.knex, subject, row.kind);
    return {
      created,
      hold: {
        hold_id: row.hold_id,
        kind: row.kind,
        units: row.units,
        day: row.day,
        expires_at: toDate(row.expires_at).toISOString(),
        status: row.status,
        ...rate,
      },
    };
  }

  /**
   * Settles a hold: `units` (0..held) become used on the hold's day, the rest is released. Settling
   * again with the same units changes nothing. A hold that expired before its settle no longer
   * reserves anything: its units are recorded only if they still fit the day (otherwise 429 and
   * nothing is recorded), so a slow caller is charged when possible and the limit is never exceeded.
   */
  async settle(subject: string, holdId: string, units: number): Promise<SettleView> {
    return this.transaction(async (trx) => {
      const row = (await trx('holds').where({ subject, hold_id: holdId }).forUpdate().first()) as
        HoldRow | undefined;
      if (!row) throw notFound('No such hold');
      const view: SettleView = { hold_id: holdId, day: row.day, units, status: 'settled' };
      const state = {
        units: row.units,
        status: row.status,
        expiresAt: toDate(row.expires_at),
        settledUnits: row.settled_units,
      };
      const first = decideSettle(state, units, this.now());
      if (first.action === 'replay') return view;
      if (first.action === 'conflict')
        throw invalidRequest('The hold was already settled with other units', 'hold_already_settled', {
          hold_id: holdId,
          settled_units: first.settledUnits,
        });
      if (first.action === 'too_many')
        throw invalidRequest('units exceeds the units held', 'units_exceed_hold', { held: first.held });
      const used = await this.lockCounter(trx, subject, row.kind, row.day);
      // Live or lapsed is judged again with the time read under the day's lock.
      const now = this.now();
      const decision = decideSettle(state, units, now);
      switch (decision.action) {
        case 'settle_lapsed': {
          const usage = { limit: this.limitOf(subject, row.kind), used, held: 0 };
          usage.held = await this.heldUnits(trx, subject, row.kind, row.day, now);
          // Settling 0 units records nothing and always closes the hold, even on a day over its limit.
          if (units > 0 && !fits(usage, units)) {
            // Nothing is recorded. The status update below would be rolled back with the error, so
            // the hold keeps its stored status; the sweeper marks it expired.
            throw this.exhausted(row.kind, usage, now, { reason: 'hold_expired', hold_id: holdId });
          }
          break;
        }
        case 'settle_live':
          break;
        default:
          throw new Error(`unexpected settle decision ${decision.action}`);
      }
      if (units > 0)
        await trx('counters').where({ subject, kind: row.kind, day: row.day }).increment('used', units);
      await trx('holds')
        .where({ subject, hold_id: holdId })
        .update({ status: 'settled', settled_units: units, settled_at: now });
      await this.emit(trx, 'settled', subject, row.kind, units, row.day, now);
      return view;
    });
  }

  /** Marks holds whose expiry has passed as expired; returns how many. Reads never depend on it. */
  async expireHolds(): Promise<number> {
    const r: unknown = await this.knex('holds')
      .where({ status: 'held' })
      .andWhere('expires_at', '<=', this.now())
      .update({ status: 'expired' });
    return affectedRows(r);
  }
}
