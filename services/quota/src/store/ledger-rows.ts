/** The rows of the ledger's tables (schema `quota`) that the use cases read. */
import type { HoldStatus, Kind } from '../domain/ledger';

export interface ChargeRow {
  subject: string;
  charge_id: string;
  kind: Kind;
  units: number;
  day: string;
  status: 'charged' | 'refunded';
}

export interface HoldRow {
  subject: string;
  hold_id: string;
  kind: Kind;
  units: number;
  day: string;
  status: HoldStatus;
  expires_at: Date | string;
  settled_units: number | null;
  /** Units of a lease charged so far (0 for a hold). */
  spent_units: number;
  /** A lease's end of spending; null for a hold. */
  usable_until: Date | string | null;
}

/** Units of the row a refund of an unknown charge id leaves (real charges have at least 1 unit). */
export const TOMBSTONE_UNITS = 0;
export const isTombstone = (row: ChargeRow): boolean => Number(row.units) === TOMBSTONE_UNITS;
