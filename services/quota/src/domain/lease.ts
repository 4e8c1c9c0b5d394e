/**
 * Quota leases, free of I/O. A lease is a hold that its holder spends call by call: `units` are reserved
 * for the day the lease was taken, `spent` of them are charged (one charge per call), and the rest counts
 * as held until the lease is closed or expires. A holder spends from a lease only until `usable_until`
 * (never past the end of the lease's day), and reports its spends before `expires_at`.
 */
import { nextResetDate } from './day';
import type { HoldState, Usage } from './ledger';
import { holdIsActive } from './ledger';

/**
 * How many units a lease gets beyond what it has: at least `min`, at most `max`, and never more than half
 * of what would be left free after `min`, so that one holder does not take a small day from the others.
 * Undefined when `min` does not fit the day.
 */
export function leaseGrant(u: Usage, min: number, max: number): number | undefined {
  const free = u.limit - u.used - u.held;
  if (free < min) return undefined;
  return min + Math.min(max - min, Math.floor((free - min) / 2));
}

/** The last instant a holder may start spending a lease taken at `now`: its window, cut at the end of the day. */
export function usableUntil(now: Date, windowMs: number): Date {
  return new Date(Math.min(now.getTime() + windowMs, nextResetDate(now).getTime()));
}

export interface LeaseState extends HoldState {
  spent: number;
}

export type SpendDecision =
  /** The lease is live and has room: the units are charged against it. */
  | { action: 'from_lease' }
  /** The lease has lapsed, closed or has no room left: the units are charged only if they fit the day now. */
  | { action: 'if_fits' };

export function decideSpend(l: LeaseState, units: number, now: Date): SpendDecision {
  return holdIsActive(l, now) && l.spent + units <= l.units
    ? { action: 'from_lease' }
    : { action: 'if_fits' };
}

/** Outcome of one call's spend (one definition, shared with images). */
export type { SpendOutcome } from '@vision/shared';
