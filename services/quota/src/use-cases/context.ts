import { randomUUID } from 'node:crypto';
import { type ApiError, type Clock, metrics } from '@vision/shared';
import { exhausted } from '../domain/exhausted';
import { quotaEvent, type QuotaEvent, type QuotaEventType } from '../domain/events';
import type { Kind } from '../domain/ledger';
import { type Limits, limitFor } from '../domain/limits';
import { type Day, dayOf, nextResetAt } from '../domain/day';
import { remaining, type Usage } from '../domain/ledger';
import type { DayUsage, RateFigures } from '../domain/views';
import type { LedgerQueries, LedgerStore } from '../store/ledger-store';

/** What every ledger use case works with. */
export interface LedgerContext {
  store: LedgerStore;
  clock: Clock;
  limits: Limits;
  /** Default lifetime of a hold when the caller gives no ttl_ms. */
  holdTtlMs: number;
}

/** A timestamp column as the driver gives it (Date from Postgres, string from PGlite). */
export const toDate = (v: Date | string): Date => (v instanceof Date ? v : new Date(v));

export const limitOf = (ctx: LedgerContext, subject: string, kind: Kind): number =>
  limitFor(ctx.limits, subject, kind);

/** One kind's figures for the day containing `now`. */
export async function usageOf(
  ctx: LedgerContext,
  q: LedgerQueries,
  subject: string,
  kind: Kind,
  now: Date,
): Promise<DayUsage> {
  const day = dayOf(now);
  const used = await q.usedUnits(subject, kind, day);
  const held = await q.heldUnits(subject, kind, day, now);
  const u = { limit: limitOf(ctx, subject, kind), used, held };
  return { ...u, ...rateOf(u, now), day };
}

/** The figures charge and hold answers carry, for a day's usage read at `now`. */
export function rateOf(u: Usage, now: Date): RateFigures {
  return { limit: u.limit, remaining: remaining(u), resets_at: nextResetAt(now) };
}

/** The current day's limit, remaining units and reset instant, as charge and hold answers carry them. */
export async function rateFigures(ctx: LedgerContext, subject: string, kind: Kind): Promise<RateFigures> {
  const now = ctx.clock.now();
  return rateOf(await usageOf(ctx, ctx.store.read, subject, kind, now), now);
}

/** A new quota event (its own event id), for the outbox of the transaction of the change it reports. */
export function newEvent(
  type: QuotaEventType,
  subject: string,
  kind: Kind,
  units: number,
  day: Day,
  at: Date,
): QuotaEvent {
  return quotaEvent(randomUUID(), type, subject, kind, units, day, at);
}

/** The answer to a request the day's quota cannot cover, counted in vision_quota_exhausted_total. */
export function refuseExhausted(...args: Parameters<typeof exhausted>): ApiError {
  metrics.quotaExhausted.inc({ kind: args[0] });
  return exhausted(...args);
}

/** The day's `exhausted` event, written with the change that used up its last unit (docs/INTERNAL.md). */
export function exhaustedEvent(subject: string, kind: Kind, day: Day, limit: number, at: Date): QuotaEvent {
  return {
    ...newEvent('exhausted', subject, kind, 0, day, at),
    limit,
    used: limit,
    resets_at: nextResetAt(at),
  };
}
