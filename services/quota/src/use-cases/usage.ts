import { type Kind, KINDS } from '../domain/ledger';
import type { DayUsage } from '../domain/views';
import { type LedgerContext, usageOf } from './context';

/** Today's figures for one subject, both kinds (GET /v1/vision/quota). */
export async function usage(ctx: LedgerContext, subject: string): Promise<Record<Kind, DayUsage>> {
  const now = ctx.clock.now();
  const [video, image] = await Promise.all(KINDS.map((k) => usageOf(ctx, ctx.store.read, subject, k, now)));
  return { video, image };
}
