/**
 * Settling the quota hold of an image call whose results are stored: by the request itself, by a
 * retry that finds the call `settling` after its owner died, or by the sweeper; and failing the
 * images quota did not grant.
 */
import type { Identity } from '@vision/shared';
import { holdIdFor } from '../domain/hold-id';
import { type ImageResult, chargeableUnits, withUngrantedImagesFailed } from '../domain/results';
import type { CallRecord } from '../store/call-store';
import type { CallRef, DetectionDeps } from './context';

/**
 * Quota refused the settle (the hold expired and the day filled up meanwhile): the succeeded images
 * are not granted. They become failed with OP-QUOTA-DAILY-EXHAUSTED in the stored results (so that
 * replays agree), the task record's summary says so, and the hold is closed with 0 units. Returns
 * the new results.
 */
export async function failUngranted(
  ctx: DetectionDeps,
  identity: Identity,
  call: CallRef & { holdId: string },
  results: readonly ImageResult[],
): Promise<ImageResult[]> {
  const failed = withUngrantedImagesFailed(results);
  // Rewrites the task record too (its outbox row, in the same transaction).
  await ctx.calls.replaceResults(call.ref, failed, 0);
  await ctx.quota.settle(identity, call.holdId, 0).catch(() => undefined);
  ctx.logger.warn(
    { task_id: call.taskId, images: chargeableUnits(results) },
    'quota did not grant the images of an expired hold; they are reported failed',
  );
  return failed;
}

/**
 * The finish step of a settling call whose owner died (a retry with the same key, or the sweeper):
 * settles the hold once and marks the call completed (left settling while quota cannot be reached).
 */
export async function finishSettling(ctx: DetectionDeps, rec: CallRecord): Promise<void> {
  const identity: Identity = { subject: rec.subject, requestId: `images-recover-${rec.taskId}` };
  const ref = { subject: rec.subject, key: rec.key, taskId: rec.taskId, attempt: rec.attempt };
  const holdId = holdIdFor(rec.taskId, rec.attempt);
  const outcome = await ctx.quota.settle(identity, holdId, rec.units ?? 0);
  if (outcome === 'exhausted')
    await failUngranted(
      ctx,
      identity,
      { ref, taskId: rec.taskId, sceneCode: rec.sceneCode, holdId },
      rec.results ?? [],
    );
  if (outcome !== 'retry_later') await ctx.calls.complete(ref, ctx.clock.now());
}
