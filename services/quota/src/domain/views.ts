import type { Day } from './day';
import type { HoldStatus, Kind, Usage } from './ledger';
import type { SpendOutcome } from './lease';

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

export interface LeaseView extends RateFigures {
  lease_id: string;
  kind: Kind;
  /** Units reserved for the lease's day, spent ones included. */
  units: number;
  spent_units: number;
  day: Day;
  usable_until: string;
  expires_at: string;
  status: HoldStatus;
}

export interface SpendView {
  lease_id: string;
  day: Day;
  /** The lease's window now: earlier than the holder's copy once the lease was recalled. */
  usable_until: string;
  spends: Array<{ charge_id: string; units: number; outcome: SpendOutcome }>;
}
