/**
 * Quota arithmetic, free of I/O. A day's counter holds `used` (charges and settled holds); `held` is
 * the sum of the day's holds that are neither settled nor expired at the moment of reading.
 */
export type Kind = 'video' | 'image';
export const KINDS: readonly Kind[] = ['video', 'image'];

export interface Usage {
  limit: number;
  used: number;
  held: number;
}

/** Units still available; never negative (a lowered limit can leave a day over it). */
export function remaining(u: Usage): number {
  return Math.max(0, u.limit - u.used - u.held);
}

/** True when `units` more can be taken without pushing the day past its limit. */
export function fits(u: Usage, units: number): boolean {
  return u.used + u.held + units <= u.limit;
}

export type HoldStatus = 'held' | 'settled' | 'expired';

export interface HoldState {
  units: number;
  status: HoldStatus;
  expiresAt: Date;
  settledUnits: number | null;
}

/** A hold counts against its day while it is `held` and its expiry is still in the future. */
export function holdIsActive(h: Pick<HoldState, 'status' | 'expiresAt'>, now: Date): boolean {
  return h.status === 'held' && h.expiresAt.getTime() > now.getTime();
}

export type SettleDecision =
  /** Already settled with the same units: answer as before, change nothing. */
  | { action: 'replay' }
  /** Already settled with other units. */
  | { action: 'conflict'; settledUnits: number }
  /** More units than were held. */
  | { action: 'too_many'; held: number }
  /** Live hold: `units` become used, the rest is released. */
  | { action: 'settle_live' }
  /**
   * Lapsed hold (its owner was slow): its units no longer count, so the settled units are recorded
   * only if they fit the day now, as a fresh charge would.
   */
  | { action: 'settle_lapsed' };

export function decideSettle(h: HoldState, units: number, now: Date): SettleDecision {
  if (h.status === 'settled') {
    return h.settledUnits === units
      ? { action: 'replay' }
      : { action: 'conflict', settledUnits: h.settledUnits ?? 0 };
  }
  if (units > h.units) return { action: 'too_many', held: h.units };
  return holdIsActive(h, now) ? { action: 'settle_live' } : { action: 'settle_lapsed' };
}
