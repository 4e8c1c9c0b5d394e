/**
 * The quota day ends at 16:00Z (midnight at UTC+8, services/quota/src/domain/day.ts): a test that reads a
 * subject's quota before and after some work would see `used` fall back to 0 if the day turned in between.
 * Such a file calls `keepClearOfQuotaDayTurn()` at its top: before its first case, it waits until the next turn
 * is further away than the file needs.
 */
import { DAY_OFFSET_MS } from '../../services/quota/src/domain/day';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Longer than any one test file that compares quota runs on a loaded machine (the longest takes about 3 minutes);
 * every file that starts inside this much of the turn waits for it, so it is also what a run loses then. */
const QUOTA_FILE_MS = 5 * 60_000;

/** Milliseconds from `now` to the next start of a quota day. */
function untilNextQuotaDay(now: number): number {
  return DAY_MS - ((now + DAY_OFFSET_MS) % DAY_MS);
}

/** Waits, if needed, so that the next `needMs` stay inside one quota day. */
async function clearOfQuotaDayTurn(needMs: number): Promise<void> {
  const left = untilNextQuotaDay(Date.now());
  if (left < needMs) await new Promise((r) => setTimeout(r, left + 1000));
}

/** A `beforeAll` of the calling file (or describe): waits, if needed, until its next `needMs` fit in one quota day. */
export function keepClearOfQuotaDayTurn(needMs = QUOTA_FILE_MS): void {
  beforeAll(() => clearOfQuotaDayTurn(needMs), needMs + 60_000);
}
