/**
 * The one reader of a `Retry-After` header (RFC 9110 10.2.3): delta-seconds or an HTTP date. Used where
 * a service reads another's answer (inference's shed answers, a webhook receiver's 429).
 */

/** Longest number of delta-seconds read (about 317 years): longer is unreadable, not a huge wait. */
const MAX_DIGITS = 10;

/**
 * The wait a `Retry-After` value asks for, in milliseconds from `now` (epoch ms): a whole number of
 * seconds, or an HTTP date (a date already past is 0); undefined when absent or unreadable. A repeated
 * header (an array) is read from its first value.
 */
export function retryAfterMs(
  value: string | readonly string[] | null | undefined,
  now: number,
): number | undefined {
  const first = Array.isArray(value) ? (value as readonly string[])[0] : (value as string | null | undefined);
  if (first === undefined || first === null) return undefined;
  const v = first.trim();
  if (v === '') return undefined;
  if (/^\d+$/.test(v)) return v.length <= MAX_DIGITS ? Number(v) * 1000 : undefined;
  // Only a date: Date.parse also reads bare numbers with signs or fractions, which are not one.
  if (!/[a-z]/i.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
