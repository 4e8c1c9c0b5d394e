/**
 * Finishing an image call whose results are stored (`settling`): once quota recorded its spend (the report
 * loop of QuotaLeases, or a retry or the sweeper that finds the call `settling` after its owner died), and
 * failing the images quota did not grant.
 */
import { ApiError, type Identity, UnreachableError } from '@vision/shared';
import type { SpendOutcome } from '../clients/quota-client';
import { holdIdFor } from '../domain/hold-id';
import { type ImageResult, chargeableUnits, withUngrantedImagesFailed } from '../domain/results';
import type { CallRecord } from '../store/call-store';
import type { SpentCall } from '../domain/call';
import type { DetectionDeps } from './context';

/**
 * Quota did not grant the call's units (its lease or hold had expired and the day filled up meanwhile):
 * the succeeded images become failed with OP-QUOTA-DAILY-EXHAUSTED in the stored results (so that replays
 * agree), and the task record's summary says so. Returns the new results.
 */
export async function failUngranted(ctx: DetectionDeps, call: SpentCall): Promise<ImageResult[]> {
  const failed = withUngrantedImagesFailed(call.results);
  // Rewrites the task record too (its outbox row, in the same transaction).
  await ctx.calls.replaceResults(call.ref, failed, 0);
  ctx.logger.warn(
    { task_id: call.taskId, images: chargeableUnits(call.results) },
    'quota did not grant the images of an expired lease; they are reported failed',
  );
  return failed;
}

/** What becomes of a call once quota recorded its spend: `exhausted` fails its images; then it is completed. */
export async function spendRecorded(
  ctx: DetectionDeps,
  call: SpentCall,
  outcome: SpendOutcome,
): Promise<void> {
  if (outcome === 'exhausted') await failUngranted(ctx, call);
  await ctx.calls.complete(call.ref, ctx.clock.now());
}

/**
 * The finish step of a settling call whose owner died or whose report is late (a retry with the same key,
 * or the sweeper): reports its spend once (idempotent by task id) and completes it; left settling while
 * quota cannot be reached. A call recorded with a quota hold (no lease) settles that hold.
 */
export async function finishSettling(ctx: DetectionDeps, rec: CallRecord): Promise<void> {
  const identity: Identity = { subject: rec.subject, requestId: `images-recover-${rec.taskId}` };
  const ref = { subject: rec.subject, key: rec.key, taskId: rec.taskId, attempt: rec.attempt };
  const call: SpentCall = { ref, taskId: rec.taskId, sceneCode: rec.sceneCode, results: rec.results ?? [] };
  const units = rec.units ?? 0;
  if (rec.leaseId === undefined) {
    const settled = await ctx.quota.settle(identity, holdIdFor(rec.taskId, rec.attempt), units);
    if (settled === 'retry_later') return;
    return spendRecorded(ctx, call, settled === 'exhausted' ? 'exhausted' : 'charged');
  }
  if (units === 0) return spendRecorded(ctx, call, 'charged');
  let outcome: SpendOutcome;
  try {
    outcome = await ctx.leases.reportNow({
      identity,
      leaseId: rec.leaseId,
      chargeId: rec.taskId,
      units,
      call,
    });
  } catch (err) {
    if (err instanceof UnreachableError || (err instanceof ApiError && err.status >= 500)) return;
    throw err;
  }
  await spendRecorded(ctx, call, outcome);
}
