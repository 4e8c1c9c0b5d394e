/**
 * Quota leases (docs/INTERNAL.md, "quota"): a holder takes units for a day once, spends them call by call
 * and closes the lease; an expiry releases what a dead holder did not spend. Every change locks the day's
 * counter first and the lease row second (the order of ./charges.ts), so leases, charges and holds of one
 * day are serialised and the day is never pushed past its limit.
 */
import { ApiError, invalidRequest, metrics, notFound } from '@vision/shared';
import { dayOf } from '../domain/day';
import { fillsTheDay } from '../domain/events';
import { decideSpend, leaseGrant, usableUntil } from '../domain/lease';
import { exhausted } from '../domain/exhausted';
import { fits, holdIsActive, type Kind, type Usage } from '../domain/ledger';
import type { LeaseView, SpendView } from '../domain/views';
import { type HoldRow, isTombstone, type LedgerQueries } from '../store/ledger-store';
import {
  type LedgerContext,
  exhaustedEvent,
  limitOf,
  newEvent,
  rateFigures,
  refuseExhausted,
  toDate,
} from './context';

export interface LeaseRequest {
  kind: Kind;
  /** The lease's total units (spent ones included) must reach at least this... */
  minUnits: number;
  /** ...and are grown up to this when the day has room. */
  maxUnits: number;
  /** How long the holder may start spending it (cut at the end of the day). */
  windowMs: number;
  /** When an unclosed lease's unspent units return to the day. */
  ttlMs: number;
}

/** The lease row of `leaseId`, or 404; a hold's id is no lease's. */
async function leaseRow(q: LedgerQueries, subject: string, leaseId: string, lock = false): Promise<HoldRow> {
  const row = await q.findHold(subject, leaseId, lock);
  if (!row || row.usable_until === null) throw notFound('No such lease');
  return row;
}

/**
 * Takes a lease of at least `minUnits` (at most `maxUnits`, see leaseGrant), or grows a live one to that;
 * a lease that has them already is answered as it is. 429 when the day cannot give `minUnits`: when the
 * subject's other leases hold unspent units, they are recalled (their window ends now; their holders close them
 * once their calls are reported) and the 429 says how many (`details.recalled`), so the asker may ask again
 * shortly. 400 `lease_ended` when the lease is past its window, closed or expired (the holder takes a new one).
 */
export async function lease(
  ctx: LedgerContext,
  subject: string,
  leaseId: string,
  r: LeaseRequest,
): Promise<{ created: boolean; lease: LeaseView }> {
  const start = ctx.clock.now();
  const known = await ctx.store.read.findHold(subject, leaseId);
  if (known && (known.usable_until === null || known.kind !== r.kind))
    throw invalidRequest('lease_id was already used for a hold or another kind', 'lease_id_conflict');
  const day = known?.day ?? dayOf(start);
  /** A lease the day has no room for: the subject's other leases are recalled (committed), then it is refused. */
  const refuse = async (q: LedgerQueries, usage: Usage, now: Date): Promise<ApiError> => {
    const recalled = await q.recallLeases(subject, r.kind, day, leaseId, now);
    return recalled > 0 ? exhausted(r.kind, usage, now, { recalled }) : refuseExhausted(r.kind, usage, now);
  };
  const created = await ctx.store.transaction(async (q): Promise<boolean | ApiError> => {
    const used = await q.lockCounter(subject, r.kind, day);
    const now = ctx.clock.now();
    const row = await q.findHold(subject, leaseId, true);
    const usage = {
      limit: limitOf(ctx, subject, r.kind),
      used,
      held: await q.heldUnits(subject, r.kind, day, now),
    };
    if (!row) {
      const units = leaseGrant(usage, r.minUnits, r.maxUnits);
      if (units === undefined) return refuse(q, usage, now);
      await q.insertLease({
        subject,
        hold_id: leaseId,
        kind: r.kind,
        units,
        day,
        status: 'held',
        created_at: now,
        expires_at: new Date(now.getTime() + r.ttlMs),
        usable_until: new Date(Math.min(usableUntil(start, r.windowMs).getTime(), now.getTime() + r.ttlMs)),
      });
      await q.appendEvent(newEvent('held', subject, r.kind, units, day, now), now);
      return true;
    }
    if (
      !holdIsActive({ status: row.status, expiresAt: toDate(row.expires_at) }, now) ||
      now.getTime() >= toDate(row.usable_until ?? now).getTime()
    )
      throw invalidRequest('The lease has ended; take a new one', 'lease_ended', { lease_id: leaseId });
    if (row.units >= r.minUnits) return false;
    const extra = leaseGrant(usage, r.minUnits - row.units, r.maxUnits - row.units);
    if (extra === undefined) return refuse(q, usage, now);
    await q.growLease(subject, leaseId, extra);
    await q.appendEvent(newEvent('held', subject, r.kind, extra, day, now), now);
    return false;
  });
  if (created instanceof ApiError) throw created;
  const row = await leaseRow(ctx.store.read, subject, leaseId);
  return { created, lease: await leaseView(ctx, subject, row) };
}

async function leaseView(ctx: LedgerContext, subject: string, row: HoldRow): Promise<LeaseView> {
  return {
    lease_id: row.hold_id,
    kind: row.kind,
    units: Number(row.units),
    spent_units: Number(row.spent_units),
    day: row.day,
    usable_until: toDate(row.usable_until ?? row.expires_at).toISOString(),
    expires_at: toDate(row.expires_at).toISOString(),
    status: row.status,
    ...(await rateFigures(ctx, subject, row.kind)),
  };
}

/**
 * Charges calls against a lease, one charge (and one `charged` event) per call, on the lease's day. A live
 * lease with room pays for them; otherwise (lapsed, closed, or out of room) a call is charged only if it
 * still fits the day, and is refused (`exhausted`) with nothing recorded if not. A charge id seen before is
 * not charged again.
 */
export async function spend(
  ctx: LedgerContext,
  subject: string,
  leaseId: string,
  spends: ReadonlyArray<{ charge_id: string; units: number }>,
): Promise<SpendView> {
  return ctx.store.transaction(async (q) => {
    const locked = await q.lockLeaseCounter(subject, leaseId);
    if (!locked) throw notFound('No such lease');
    const { kind } = locked;
    let used = locked.used;
    const now = ctx.clock.now();
    // The lease row, locked, and the charges already recorded for these ids: one statement.
    const found = await q.lockHoldWithCharges(
      subject,
      leaseId,
      spends.map((s) => s.charge_id),
    );
    if (!found || found.hold.usable_until === null) throw notFound('No such lease');
    const { hold: row, charges: priors } = found;
    const limit = limitOf(ctx, subject, kind);
    const lease = {
      units: Number(row.units),
      spent: Number(row.spent_units),
      status: row.status,
      expiresAt: toDate(row.expires_at),
      settledUnits: row.settled_units,
    };
    const out: SpendView['spends'] = [];
    for (const s of spends) {
      const prior = priors.get(s.charge_id);
      if (prior) {
        if (!isTombstone(prior) && (prior.kind !== kind || Number(prior.units) !== s.units))
          throw invalidRequest(
            'charge_id was already used for another kind or number of units',
            'charge_id_conflict',
            {
              charge_id: s.charge_id,
            },
          );
        out.push({ ...s, outcome: isTombstone(prior) ? 'refunded' : 'replayed' });
        continue;
      }
      const fromLease = decideSpend(lease, s.units, now).action === 'from_lease';
      if (fromLease) lease.spent += s.units;
      else if (!fits({ limit, used, held: await q.heldUnits(subject, kind, row.day, now) }, s.units)) {
        metrics.quotaExhausted.inc({ kind });
        out.push({ ...s, outcome: 'exhausted' });
        continue;
      }
      const charge = { subject, charge_id: s.charge_id, kind, units: s.units, day: row.day };
      await q.recordCharge(
        { ...charge, status: 'charged', charged_at: now },
        fromLease ? leaseId : undefined,
        [
          newEvent('charged', subject, kind, s.units, row.day, now),
          ...(fillsTheDay(used, s.units, limit) ? [exhaustedEvent(subject, kind, row.day, limit, now)] : []),
        ],
      );
      // A charge id twice in one report: the second is a replay of the first.
      priors.set(s.charge_id, { ...charge, status: 'charged' });
      used += s.units;
      out.push({ ...s, outcome: 'charged' });
    }
    // Its window as it is now: a lease recalled since the holder took it ends here (the holder stops using it).
    return {
      lease_id: leaseId,
      day: row.day,
      usable_until: toDate(row.usable_until ?? row.expires_at).toISOString(),
      spends: out,
    };
  });
}

/** Closes a lease: what it spent stays charged, the rest returns to its day. Closing again changes nothing. */
export async function closeLease(ctx: LedgerContext, subject: string, leaseId: string): Promise<LeaseView> {
  await ctx.store.transaction(async (q) => {
    const row = await leaseRow(q, subject, leaseId, true);
    if (row.status !== 'held') return;
    const now = ctx.clock.now();
    await q.closeLease(subject, leaseId, now);
    await q.appendEvent(newEvent('settled', subject, row.kind, 0, row.day, now), now);
  });
  return leaseView(ctx, subject, await leaseRow(ctx.store.read, subject, leaseId));
}
