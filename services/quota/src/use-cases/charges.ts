/**
 * Charges and refunds. Every change of a (subject, kind, day) runs in one transaction that first locks that day's
 * counter row, then reads `used` and the live holds, then writes the change and its outbox event. Concurrent
 * requests of one day are therefore serialised on Postgres, and can never push the day past its limit; PGlite has a
 * single connection, so there the transactions are serialised anyway. The current time is read after the lock is granted, so a
 * transaction never judges a hold's expiry with an instant older than the one of the transaction before it.
 */
import { invalidRequest, notFound } from '@vision/shared';
import { dayOf } from '../domain/day';
import { fits, type Kind } from '../domain/ledger';
import type { ChargeView, RefundView } from '../domain/views';
import { isTombstone, TOMBSTONE_UNITS } from '../store/ledger-store';
import { fillsTheDay } from '../domain/events';
import {
  type LedgerContext,
  exhaustedEvent,
  limitOf,
  newEvent,
  rateFigures,
  refuseExhausted,
} from './context';

/** Charges `units` to today. Answers `created: false` with the stored charge when `chargeId` exists. */
export async function charge(
  ctx: LedgerContext,
  subject: string,
  chargeId: string,
  kind: Kind,
  units: number,
): Promise<{ created: boolean; charge: ChargeView }> {
  const day = dayOf(ctx.clock.now());
  const created = await ctx.store.transaction(async (q) => {
    // The insert comes first: a concurrent request with the same id waits on the key until this
    // transaction ends, then finds the row (or inserts it if this one rolled back).
    const row = { subject, charge_id: chargeId, kind, units, day, status: 'charged' as const };
    if (!(await q.insertCharge({ ...row, charged_at: ctx.clock.now() }))) return false;
    const used = await q.lockCounter(subject, kind, day);
    const now = ctx.clock.now();
    const usage = {
      limit: limitOf(ctx, subject, kind),
      used,
      held: await q.heldUnits(subject, kind, day, now),
    };
    if (!fits(usage, units)) throw refuseExhausted(kind, usage, now);
    await q.addUsed(subject, kind, day, units);
    await q.appendEvent(newEvent('charged', subject, kind, units, day, now), now);
    if (fillsTheDay(used, units, usage.limit))
      await q.appendEvent(exhaustedEvent(subject, kind, day, usage.limit, now), now);
    return true;
  });
  const row = await ctx.store.read.findCharge(subject, chargeId);
  if (!row) throw new Error('charge row missing after commit');
  if (isTombstone(row)) {
    // Refunded before it arrived: answered as refunded, nothing consumed.
    const rate = await rateFigures(ctx, subject, kind);
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
  const rate = await rateFigures(ctx, subject, row.kind);
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
export async function refund(ctx: LedgerContext, subject: string, chargeId: string): Promise<RefundView> {
  const view = await ctx.store.transaction(async (q): Promise<RefundView | undefined> => {
    let row = await q.findCharge(subject, chargeId, true);
    if (!row) {
      const now = ctx.clock.now();
      const tombstone = {
        subject,
        charge_id: chargeId,
        kind: 'video' as const,
        units: TOMBSTONE_UNITS,
        day: dayOf(now),
        status: 'refunded' as const,
      };
      if (await q.insertCharge({ ...tombstone, charged_at: now, refunded_at: now })) return undefined;
      // A concurrent charge with this id committed while the insert waited on the key.
      row = await q.findCharge(subject, chargeId, true);
      if (!row) throw new Error('charge row missing after key conflict');
    }
    if (isTombstone(row)) return undefined;
    if (row.status === 'refunded') return { charge_id: chargeId, day: row.day, status: 'refunded' };
    await q.lockCounter(subject, row.kind, row.day);
    const now = ctx.clock.now();
    await q.subtractUsed(subject, row.kind, row.day, row.units);
    await q.markRefunded(subject, chargeId, now);
    await q.appendEvent(newEvent('refunded', subject, row.kind, row.units, row.day, now), now);
    return { charge_id: chargeId, day: row.day, status: 'refunded' };
  });
  if (!view) throw notFound('No such charge');
  return view;
}
