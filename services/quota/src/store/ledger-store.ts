import { type Knex, metrics } from '@vision/shared';
import type { Day } from '../domain/day';
import type { QuotaEvent } from '../domain/events';
import type { Kind } from '../domain/ledger';
import type { ChargeRow, HoldRow } from './ledger-rows';
import { countEvent, eventRow } from './event-rows';

type Trx = Knex.Transaction;

export { type ChargeRow, type HoldRow, TOMBSTONE_UNITS, isTombstone } from './ledger-rows';

/**
 * The ledger's SQL (schema `quota`: counters, charges, holds, outbox), over the database or one transaction.
 * Inserts of charges and holds ignore an existing id and say whether they inserted, so a concurrent request with
 * the same id waits on the key until the first transaction ends.
 */
export class LedgerQueries {
  /** Metrics of the events written, recorded once the transaction has committed (LedgerStore). */
  readonly afterCommit: Array<() => void> = [];

  constructor(private readonly q: Knex | Trx) {}

  /**
   * Inserts the day's counter row if missing and locks it, in one statement (an upsert that rewrites the row
   * takes its row lock as `SELECT ... FOR UPDATE` would, and a waiting transaction reads the committed value);
   * returns `used` as it was before `adding` units were added in the same statement. A caller that judges the
   * fit with that figure throws to roll the addition back.
   */
  async lockCounter(subject: string, kind: Kind, day: Day, adding = 0): Promise<number> {
    const rows = (await this.q('counters')
      .insert({ subject, kind, day, used: adding })
      .onConflict(['subject', 'kind', 'day'])
      .merge({ used: this.q.raw('?? + ?', ['counters.used', adding]) })
      .returning('used')) as Array<{ used: number | string }>;
    if (rows.length !== 1) throw new Error('quota counter row vanished');
    return Number(rows[0].used) - adding;
  }

  /**
   * lockCounter for the day and kind of the lease `leaseId`, read from the lease row in the same statement (a lease's
   * day and kind never change); undefined when no lease has that id (nothing locked).
   */
  async lockLeaseCounter(
    subject: string,
    leaseId: string,
  ): Promise<{ used: number; kind: Kind; day: Day } | undefined> {
    const r = (await this.q.raw(
      `insert into counters as c (subject, kind, day, used)
       select subject, kind, day, 0 from holds where subject = ? and hold_id = ? and usable_until is not null
       on conflict (subject, kind, day) do update set used = c.used
       returning used, kind, day`,
      [subject, leaseId],
    )) as { rows: Array<{ used: number | string; kind: Kind; day: Day }> };
    const row = r.rows[0];
    return row && { used: Number(row.used), kind: row.kind, day: row.day };
  }

  /**
   * Locks the row of `holdId` (`FOR UPDATE`) and reads the charges of `chargeIds` that exist, by id, in one
   * statement; undefined when no hold has that id. A caller that holds the day's counter reads every charge
   * committed before it took that lock, as a later statement would.
   */
  async lockHoldWithCharges(
    subject: string,
    holdId: string,
    chargeIds: readonly string[],
  ): Promise<{ hold: HoldRow; charges: Map<string, ChargeRow> } | undefined> {
    const r = (await this.q.raw(
      `select h.*, coalesce((
         select json_agg(json_build_object('subject', c.subject, 'charge_id', c.charge_id, 'kind', c.kind,
                                           'units', c.units, 'day', c.day, 'status', c.status))
         from charges c where c.subject = h.subject and c.charge_id in (${chargeIds.map(() => '?').join(', ') || 'null'})
       ), '[]'::json) as found_charges
       from holds h where h.subject = ? and h.hold_id = ? for update of h`,
      [...chargeIds, subject, holdId],
    )) as { rows: Array<HoldRow & { found_charges: ChargeRow[] | string }> };
    const row = r.rows[0];
    if (!row) return undefined;
    const { found_charges: found, ...hold } = row;
    const charges = (typeof found === 'string' ? JSON.parse(found) : found) as ChargeRow[];
    return { hold, charges: new Map(charges.map((c) => [c.charge_id, c])) };
  }

  /**
   * Records one charge in one statement: the charge row, the day's `used`, the lease's `spent_units` when it pays
   * (`fromLease`), and the events (appendEvent) in the outbox. The caller holds the day's counter and the lease row.
   */
  async recordCharge(
    row: ChargeRow & { charged_at: Date },
    fromLease: string | undefined,
    events: readonly [QuotaEvent, ...QuotaEvent[]],
  ): Promise<void> {
    const writes = [
      this.q('charges').insert(row).toSQL(),
      this.q('counters')
        .where({ subject: row.subject, kind: row.kind, day: row.day })
        .increment('used', row.units)
        .toSQL(),
      ...(fromLease === undefined
        ? []
        : [
            this.q('holds')
              .where({ subject: row.subject, hold_id: fromLease })
              .increment('spent_units', row.units)
              .toSQL(),
          ]),
    ];
    // One insert of all the events: their ids, and so their order on the bus, are the order given.
    const insert = this.q('outbox')
      .insert(events.map((e) => eventRow(e, row.charged_at)))
      .toSQL();
    const ctes = writes.map((w, i) => `w${i} as (${w.sql})`).join(', ');
    await this.q.raw(`with ${ctes} ${insert.sql}`, [
      ...writes.flatMap((w) => w.bindings),
      ...insert.bindings,
    ]);
    for (const e of events) this.afterCommit.push(() => countEvent(e.type, e.kind, e.units));
  }

  /** Units of the day's holds that are `held` and not expired at `now`, less what leases among them spent. */
  async heldUnits(subject: string, kind: Kind, day: Day, now: Date): Promise<number> {
    const row = (await this.q('holds')
      .where({ subject, kind, day, status: 'held' })
      .andWhere('expires_at', '>', now)
      .select(this.q.raw('sum(units - spent_units) as held'))
      .first()) as { held: string | number | null } | undefined;
    return Number(row?.held ?? 0);
  }

  async usedUnits(subject: string, kind: Kind, day: Day): Promise<number> {
    const row = (await this.q('counters').where({ subject, kind, day }).first('used')) as
      { used: number } | undefined;
    return Number(row?.used ?? 0);
  }

  async addUsed(subject: string, kind: Kind, day: Day, units: number): Promise<void> {
    await this.q('counters').where({ subject, kind, day }).increment('used', units);
  }

  /** Gives `units` back to a day, never below 0. */
  async subtractUsed(subject: string, kind: Kind, day: Day, units: number): Promise<void> {
    await this.q('counters')
      .where({ subject, kind, day })
      .update({ used: this.q.raw('greatest(used - ?, 0)', [units]) });
  }

  /** Inserts a charge unless its id exists; true when this call inserted it. */
  async insertCharge(row: ChargeRow & { charged_at: Date; refunded_at?: Date }): Promise<boolean> {
    const inserted = await this.q('charges')
      .insert(row)
      .onConflict(['subject', 'charge_id'])
      .ignore()
      .returning('charge_id');
    return inserted.length > 0;
  }

  async findCharge(subject: string, chargeId: string, forUpdate = false): Promise<ChargeRow | undefined> {
    const query = this.q('charges').where({ subject, charge_id: chargeId });
    return (await (forUpdate ? query.forUpdate() : query).first()) as ChargeRow | undefined;
  }

  async markRefunded(subject: string, chargeId: string, at: Date): Promise<void> {
    await this.q('charges')
      .where({ subject, charge_id: chargeId })
      .update({ status: 'refunded', refunded_at: at });
  }

  /**
   * Inserts a hold unless its id exists and, only when it inserted it, locks the day's counter (lockCounter), in
   * one statement: the counter's upsert reads the row the hold's insert returns, so the key is taken first and a
   * concurrent request with the same id waits on the key without holding the counter. Returns the counter's
   * `used`, or undefined when the id existed (nothing locked).
   */
  async insertHoldLockingCounter(
    row: Omit<HoldRow, 'settled_units' | 'spent_units'> & { created_at: Date; expires_at: Date },
  ): Promise<number | undefined> {
    const insert = this.q('holds')
      .insert(row)
      .onConflict(['subject', 'hold_id'])
      .ignore()
      .returning(['subject', 'kind', 'day'])
      .toSQL();
    const r = (await this.q.raw(
      `with h as (${insert.sql})
       insert into counters as c (subject, kind, day, used) select subject, kind, day, 0 from h
       on conflict (subject, kind, day) do update set used = c.used
       returning used`,
      insert.bindings,
    )) as { rows: Array<{ used: number | string }> };
    return r.rows.length === 1 ? Number(r.rows[0].used) : undefined;
  }

  /** Inserts a lease (a hold with a spending window); the caller holds the day's counter lock. */
  async insertLease(
    row: Omit<HoldRow, 'settled_units' | 'spent_units'> & {
      created_at: Date;
      expires_at: Date;
      usable_until: Date;
    },
  ): Promise<void> {
    await this.q('holds').insert(row);
  }

  /** Reserves `units` more for a lease. */
  async growLease(subject: string, leaseId: string, units: number): Promise<void> {
    await this.q('holds').where({ subject, hold_id: leaseId }).increment('units', units);
  }

  /**
   * Recalls the subject's other live leases of the day that still hold unspent units: their window ends at `now`,
   * so their holders take no more from them and close them once their calls are reported. Returns the units those
   * leases still hold (recalled now or before): what comes back to the day as they close.
   */
  async recallLeases(subject: string, kind: Kind, day: Day, exceptId: string, now: Date): Promise<number> {
    const others = () =>
      this.q('holds')
        .where({ subject, kind, day, status: 'held' })
        .whereNotNull('usable_until')
        .andWhere('expires_at', '>', now)
        .andWhereRaw('units > spent_units')
        .andWhereNot('hold_id', exceptId);
    await others().andWhere('usable_until', '>', now).update({ usable_until: now });
    const row = (await others().select(this.q.raw('sum(units - spent_units) as held')).first()) as
      { held: string | number | null } | undefined;
    return Number(row?.held ?? 0);
  }

  /** Closes a lease: what it spent stays charged, the rest is released. */
  async closeLease(subject: string, leaseId: string, at: Date): Promise<void> {
    await this.q('holds')
      .where({ subject, hold_id: leaseId })
      .update({ status: 'settled', settled_units: this.q.raw('spent_units'), settled_at: at });
  }

  async findHold(subject: string, holdId: string, forUpdate = false): Promise<HoldRow | undefined> {
    const query = this.q('holds').where({ subject, hold_id: holdId });
    return (await (forUpdate ? query.forUpdate() : query).first()) as HoldRow | undefined;
  }

  /** Marks a hold settled and writes its `settled` event to the outbox (appendEvent), in one statement. */
  async markSettled(
    subject: string,
    holdId: string,
    units: number,
    at: Date,
    event: QuotaEvent,
  ): Promise<void> {
    const update = this.q('holds')
      .where({ subject, hold_id: holdId })
      .update({ status: 'settled', settled_units: units, settled_at: at })
      .toSQL();
    const insert = this.q('outbox').insert(eventRow(event, at)).toSQL();
    await this.q.raw(`with s as (${update.sql}) ${insert.sql}`, [...update.bindings, ...insert.bindings]);
    this.afterCommit.push(() => countEvent(event.type, event.kind, event.units));
  }

  /** Marks holds whose expiry has passed as expired; returns how many. */
  async expireHolds(now: Date): Promise<number> {
    const rows = (await this.q('holds')
      .where({ status: 'held' })
      .andWhere('expires_at', '<=', now)
      .update({ status: 'expired' })
      .returning('kind')) as { kind: Kind }[];
    for (const r of rows) metrics.quotaHolds.inc({ kind: r.kind, outcome: 'expired' });
    return rows.length;
  }

  /** Writes a `vision.quota-events` row to the outbox (in the transaction of the change it reports). */
  async appendEvent(event: QuotaEvent, at: Date): Promise<void> {
    await this.q('outbox').insert(eventRow(event, at));
    this.afterCommit.push(() => countEvent(event.type, event.kind, event.units));
  }
}

/** The ledger's store: reads outside a transaction, and transactions that wake the outbox relay once committed. */
export class LedgerStore {
  readonly read: LedgerQueries;

  constructor(
    private readonly knex: Knex,
    /** Called after a transaction (which may have written outbox rows) has committed. */
    private readonly onCommit?: () => void,
  ) {
    this.read = new LedgerQueries(knex);
  }

  async transaction<T>(fn: (q: LedgerQueries) => Promise<T>): Promise<T> {
    const q = await this.knex.transaction(async (trx) => {
      const queries = new LedgerQueries(trx);
      return { queries, result: await fn(queries) };
    });
    for (const record of q.queries.afterCommit) record();
    this.onCommit?.();
    return q.result;
  }
}
