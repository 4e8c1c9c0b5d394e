/**
 * The quota day is the calendar day at UTC+8: it runs from 00:00 to 24:00 at UTC+8, that is from
 * 16:00Z of the previous UTC day to 16:00Z. Pure functions of an instant; no time zone database.
 */
export const DAY_OFFSET_MS = 8 * 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** A quota day, `YYYY-MM-DD`. */
export type Day = string;

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;

export function isDay(value: string): value is Day {
  return DAY_RE.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`));
}

/** The UTC+8 calendar day of an instant. */
export function dayOf(date: Date): Day {
  return new Date(date.getTime() + DAY_OFFSET_MS).toISOString().slice(0, 10);
}

/** The instant a quota day starts (00:00 at UTC+8), as a Date. */
export function dayStart(day: Day): Date {
  return new Date(Date.parse(`${day}T00:00:00Z`) - DAY_OFFSET_MS);
}

/** The instant the day containing `date` ends and the next one starts, as a Date. */
export function nextResetDate(date: Date): Date {
  const shifted = date.getTime() + DAY_OFFSET_MS;
  return new Date(Math.floor(shifted / DAY_MS) * DAY_MS + DAY_MS - DAY_OFFSET_MS);
}

/** When the quota of the day containing `date` resets: an ISO 8601 UTC timestamp. */
export function nextResetAt(date: Date): string {
  return nextResetDate(date).toISOString();
}

/** Whole seconds from `date` until the next reset (at least 1), for a Retry-After header. */
export function secondsUntilReset(date: Date): number {
  return Math.max(1, Math.ceil((nextResetDate(date).getTime() - date.getTime()) / 1000));
}
