/**
 * Settling the quota hold of an image call whose results are stored: by the request itself, by a
 * retry that finds the call `settling` after its owner died, or by the sweeper; and failing the
 * images quota did not grant.
 */
import type { Identity } from '@vision/shared';
import { holdIdFor } from '../domain/idempotency';
import { type ImageResult, chargeableUnits, withUngrantedImagesFailed } from '../domain/results';
import type { CallRecord } from '../store/call-store';
import { type DetectionDeps, leaseFrom } from './context';
import { imageTaskRecord } from './task-record';

/**
 * Quota refused the settle (the hold expired and the day filled up meanwhile): the succeeded images
 * are not granted. They become failed with OP-QUOTA-DAILY-EXHAUSTED in the stored results (so that
 * replays agree), the task record's summary says so, and the hold is closed with 0 units. Returns
 * the new results.
 */
export async function failUngranted(
  ctx: DetectionDeps,
  identity: Identity,
  call: {
    subject: string;
    idempotencyKey: string;
    attempt: number;
    taskId: string;
    sceneCode: string;
    holdId: string;
  },
  results: readonly ImageResult[],
): Promise<ImageResult[]> {
  const failed = withUngrantedImagesFailed(results);
  await ctx.calls.replaceResults(call.subject, call.idempotencyKey, call.attempt, failed, 0);
  const rewritten = await ctx.tasks
    .writeImageTask(identity, imageTaskRecord(call, failed))
    .catch(() => false);
  if (!rewritten)
    ctx.logger.warn({ task_id: call.taskId }, 'the task record still counts the ungranted images');
  await ctx.quota.settle(identity, call.holdId, 0).catch(() => undefined);
  ctx.logger.warn(
    { task_id: call.taskId, images: chargeableUnits(results) },
    'quota did not grant the images of an expired hold; they are reported failed',
  );
  return failed;
}

/** Settles a call whose results are stored and marks it completed; returns the record to replay. */
export async function finishSettling(ctx: DetectionDeps, rec: CallRecord): Promise<CallRecord> {
  const identity: Identity = { subject: rec.subject, requestId: `images-recover-${rec.taskId}` };
  const holdId = holdIdFor(rec.taskId, rec.attempt);
  const outcome = await ctx.quota.settle(identity, holdId, rec.units ?? 0);
  let done = rec;
  if (outcome === 'exhausted') {
    const results = await failUngranted(ctx, identity, { ...rec, holdId }, rec.results ?? []);
    done = { ...rec, results, units: 0 };
  }
  if (outcome !== 'retry_later')
    await ctx.calls.markCompleted(rec.subject, rec.idempotencyKey, rec.attempt, ctx.clock.now());
  return done;
}

/** Settles calls left in `settling` by a crashed or interrupted owner (the sweeper; run at start and periodically). */
export async function recoverLapsed(ctx: DetectionDeps, limit = 100): Promise<number> {
  const { calls, clock } = ctx;
  const lapsed = await calls.lapsedSettling(clock.now(), limit);
  let n = 0;
  for (const rec of lapsed) {
    const now = clock.now();
    if (!(await calls.takeSettling(rec.subject, rec.idempotencyKey, rec.attempt, now, leaseFrom(ctx, now))))
      continue;
    await finishSettling(ctx, rec);
    n += 1;
  }
  return n;
}
