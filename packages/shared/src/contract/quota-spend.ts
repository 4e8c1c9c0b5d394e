/**
 * What quota answers for one call's spend reported against a lease (docs/INTERNAL.md, quota leases): the
 * one definition of the wire value, written by quota and read by images.
 * - `charged`: charged now; `replayed`: charged before (same id and units);
 * - `refunded`: refunded before it arrived (nothing charged);
 * - `exhausted`: refused because the day is full (nothing charged).
 */
export type SpendOutcome = 'charged' | 'replayed' | 'refunded' | 'exhausted';
