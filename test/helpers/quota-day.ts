/**
 * The quota day ends at 16:00Z (midnight at UTC+8, services/quota/src/domain/day.ts): a test that reads a
 * subject's quota before and after some work would see `used` fall back to 0 if the day turned in between.
 * Such a test first waits until the next turn is further away than the time it needs.
 */
import { DAY_OFFSET_MS } from '../../services/quota/src/domain/day';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Milliseconds from `now` to the next start of a quota day. */
export function untilNextQuotaDay(now: number): number {
  return DAY_MS - ((now + DAY_OFFSET_MS) % DAY_MS);
}

/** Waits, if needed, so that the next `needMs` stay inside one quota day. */
export async function clearOfQuotaDayTurn(needMs: number): Promise<void> {
  const left = untilNextQuotaDay(Date.now());
  if (left < needMs) await new Promise((r) => setTimeout(r, left + 1000));
}
