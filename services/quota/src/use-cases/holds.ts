import { invalidRequest, notFound } from '@vision/shared';
import { dayOf } from '../domain/day';
import { decideSettle, fits, type Kind } from '../domain/ledger';
import type { HoldView, SettleView } from '../domain/views';
import { fillsTheDay } from '../domain/events';
import {
  type LedgerContext,
  exhaustedEvent,
  limitOf,
  newEvent,
  rateFigures,
  rateOf,
  refuseExhausted,
  toDate,
} from './context';

/** Holds `units` of today until settled or `ttlMs` has passed (the locking rule of ./charges.ts applies). */
export async function hold(
  ctx: LedgerContext,
  subject: string,
  holdId: string,
  kind: Kind,
  units: number,
  ttlMs?: number,
): Promise<{ created: boolean; hold: HoldView }> {
  const start = ctx.clock.now();
  const day = dayOf(start);
  const expires_at = new Date(start.getTime() + (ttlMs ?? ctx.holdTtlMs));
  const fresh = await ctx.store.transaction(async (q) => {
    const row = {
      subject,
      hold_id: holdId,
      kind,
      units,
      day,
      status: 'held' as const,
      expires_at,
      usable_until: null,
    };
    const used = await q.insertHoldLockingCounter({ ...row, created_at: start });
    if (used === undefined) return undefined;
    const now = ctx.clock.now();
    // The new hold is part of the sum already (same transaction); take it out to judge the fit.
    const held = (await q.heldUnits(subject, kind, day, now)) - units;
    const usage = { limit: limitOf(ctx, subject, kind), used, held: Math.max(0, held) };
    if (!fits(usage, units)) throw refuseExhausted(kind, usage, now);
    await q.appendEvent(newEvent('held', subject, kind, units, day, now), now);
    // The answer's figures as this transaction leaves the day (its counter is locked): no reads after it.
    return { now, usage: { ...usage, held: usage.held + units } };
  });
  if (fresh && dayOf(fresh.now) === day) {
    const view = { hold_id: holdId, kind, units, day, expires_at: expires_at.toISOString() };
    return { created: true, hold: { ...view, status: 'held', ...rateOf(fresh.usage, fresh.now) } };
  }
  const row = await ctx.store.read.findHold(subject, holdId);
  if (!row) throw new Error('hold row missing after commit');
  if (!fresh && (row.kind !== kind || row.units !== units))
    throw invalidRequest('hold_id was already used for another kind or number of units', 'hold_id_conflict', {
      hold_id: holdId,
      kind: row.kind,
      units: row.units,
    });
  const rate = await rateFigures(ctx, subject, row.kind);
  return {
    created: fresh !== undefined,
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
export async function settle(
  ctx: LedgerContext,
  subject: string,
  holdId: string,
  units: number,
): Promise<SettleView> {
  return ctx.store.transaction(async (q) => {
    const row = await q.findHold(subject, holdId, true);
    // A lease is closed, never settled (./leases.ts).
    if (!row || row.usable_until !== null) throw notFound('No such hold');
    const view: SettleView = { hold_id: holdId, day: row.day, units, status: 'settled' };
    const state = {
      units: row.units,
      status: row.status,
      expiresAt: toDate(row.expires_at),
      settledUnits: row.settled_units,
    };
    const first = decideSettle(state, units, ctx.clock.now());
    if (first.action === 'replay') return view;
    if (first.action === 'conflict')
      throw invalidRequest('The hold was already settled with other units', 'hold_already_settled', {
        hold_id: holdId,
        settled_units: first.settledUnits,
      });
    if (first.action === 'too_many')
      throw invalidRequest('units exceeds the units held', 'units_exceed_hold', { held: first.held });
    // Units are added as the counter is locked (one statement); a refusal below rolls the addition back.
    const used = await q.lockCounter(subject, row.kind, row.day, units);
    // Live or lapsed is judged again with the time read under the day's lock.
    const now = ctx.clock.now();
    const decision = decideSettle(state, units, now);
    switch (decision.action) {
      case 'settle_lapsed': {
        const usage = { limit: limitOf(ctx, subject, row.kind), used, held: 0 };
        usage.held = await q.heldUnits(subject, row.kind, row.day, now);
        // Settling 0 units records nothing and always closes the hold, even on a day over its limit.
        if (units > 0 && !fits(usage, units)) {
          // Nothing is recorded. The status update below would be rolled back with the error, so
          // the hold keeps its stored status; the sweeper marks it expired.
          throw refuseExhausted(row.kind, usage, now, { reason: 'hold_expired', hold_id: holdId });
        }
        break;
      }
      case 'settle_live':
        break;
      default:
        throw new Error(`unexpected settle decision ${decision.action}`);
    }
    await q.markSettled(
      subject,
      holdId,
      units,
      now,
      newEvent('settled', subject, row.kind, units, row.day, now),
    );
    const limit = limitOf(ctx, subject, row.kind);
    if (fillsTheDay(used, units, limit))
      await q.appendEvent(exhaustedEvent(subject, row.kind, row.day, limit, now), now);
    return view;
  });
}

/** Marks holds whose expiry has passed as expired; returns how many. Reads never depend on it. */
export function expireHolds(ctx: LedgerContext): Promise<number> {
  return ctx.store.read.expireHolds(ctx.clock.now());
}
