/**
 * Running one image call that this request owns (fresh, or taken over from a dead owner): breaker and
 * scene gate, quota hold, inference then relay per image, results and task record, settle (SPEC.md 4.6).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ApiError, type Identity, type OwnedClaim, REASON } from '@vision/shared';
import { holdIdFor } from '../domain/hold-id';
import { CONTENT_TYPES } from '../domain/image-type';
import { imageObjectKey } from '../domain/object-key';
import {
  type DetectionResponse,
  type ImageResult,
  chargeableUnits,
  detectionResponse,
  errorCodeFor,
  inUploadOrder,
  toImageObject,
} from '../domain/results';
import type { UploadedImage } from '../http/upload/multipart';
import type { CallRecord } from '../store/call-store';
import type { CallControl, CallRef, DetectionDeps } from './context';
import { failUngranted } from './settle-call';

export interface DetectionOutcome {
  status: 200 | 201;
  body: DetectionResponse;
}

export async function runCall(
  ctx: DetectionDeps,
  identity: Identity,
  owned: OwnedClaim<CallRecord>,
  sceneCode: string,
  files: UploadedImage[],
  control: CallControl = {},
): Promise<DetectionOutcome> {
  const { calls, quota, clock, logger, settings } = ctx;
  const call: CallRef = { ref: owned.ref, taskId: owned.taskId, sceneCode };
  const holdId = holdIdFor(call.taskId, call.ref.attempt);
  if (!owned.fresh) {
    // The dead attempt's hold was never settled: release it rather than wait for it to expire.
    await quota.settle(identity, holdIdFor(call.taskId, call.ref.attempt - 1), 0).catch(() => undefined);
    logger.warn(
      { task_id: call.taskId, attempt: call.ref.attempt },
      'running an interrupted image call again',
    );
  }
  // Nothing is held yet: any refusal here forgets the call so that the key can be used again.
  try {
    if (ctx.inference.isOpen())
      throw new ApiError(
        'OP-TASK-BREAKER-OPEN',
        'The inference backend is failing; new requests are not accepted for now',
        { reason: REASON.breaker_open },
      );
    await ctx.scenes.requireEnabled(sceneCode);
  } catch (err) {
    await forget(owned);
    throw err;
  }
  // The hold is asked for while the first images are detected (their detection waits for nothing); nothing
  // is written and no further image is taken before it is granted (processImages). It goes out one turn of
  // the event loop after the first images: in the standalone process inference then reads the first image
  // and starts decoding it before the hold's statements take the thread (docs/PERFORMANCE.md, "The request path").
  const held = nextTurn().then(() =>
    quota.hold(identity, holdId, files.length, settings.holdTtlMs, control.deadline),
  );
  const holdError = held.then(
    () => undefined,
    (err: unknown) => err,
  );

  let results: ImageResult[];
  try {
    results = await processImages(ctx, identity, call.taskId, sceneCode, files, held, control);
    await held;
  } catch (err) {
    const refused = await holdError;
    if (refused === undefined) await quota.settle(identity, holdId, 0).catch(() => undefined);
    await forget(owned);
    throw refused ?? err;
  }
  const units = chargeableUnits(results);

  // Storing the results writes the call's task record to the outbox too (vision.image-calls -> tasks).
  if (!(await calls.storeResults(call.ref, results, units))) {
    // Another request took this call over while we ran (our lease lapsed): let it win.
    await quota.settle(identity, holdId, 0).catch(() => undefined);
    throw new ApiError(
      'OP-SYS-UNAVAILABLE',
      'The request was interrupted; retry with the same Idempotency-Key',
    );
  }
  let final = results;
  const settled = await quota.settle(identity, holdId, units);
  if (settled === 'retry_later') {
    // Results stand; the sweeper settles the hold when quota answers again.
    logger.warn({ task_id: call.taskId, units }, 'quota settle failed; left for the sweeper');
  } else {
    if (settled === 'exhausted') final = await failUngranted(ctx, identity, { ...call, holdId }, results);
    if (settled === 'gone')
      logger.warn({ task_id: call.taskId, units }, 'quota refused the settle (hold gone)');
    await calls.complete(call.ref, clock.now());
  }
  return { status: 201, body: detectionResponse(call.taskId, call.ref.key, final, false) };
}

/**
 * Detects every image, then relays to object storage only the images inference decoded: an image that
 * does not decode (or whose detection failed) is never written, so it cannot be kept for free. One
 * image's failure is its own. Until the quota hold is granted only the first image of each worker is
 * detected (at most detectConcurrency images of a refused call are detected for nothing) and nothing
 * is written; a refused hold fails the whole call.
 *
 * The whole call is refused (nothing charged, the key free again) when its caller has gone, its deadline
 * passed, or inference shed one of its images for want of room or time (docs/OVERLOAD.md): no further
 * image goes to inference, the images in flight are awaited, and the images already relayed are deleted.
 */
async function processImages(
  ctx: DetectionDeps,
  identity: Identity,
  taskId: string,
  sceneCode: string,
  files: UploadedImage[],
  held: Promise<unknown>,
  control: CallControl,
): Promise<ImageResult[]> {
  const { store, inference, clock, logger } = ctx;
  const at = clock.now();
  const results: ImageResult[] = [];
  const relayed: string[] = [];
  /** Why the call stops early: the first refusal seen. */
  let stop: unknown;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length && stop === undefined) {
      if (control.signal?.aborted) {
        stop = control.signal.reason;
        return;
      }
      const f = files[next++];
      const outcome = await inference.detect(
        identity,
        sceneCode,
        f.data,
        CONTENT_TYPES[f.type],
        control.deadline,
      );
      await held;
      if (outcome.status === 'shed') {
        stop ??= outcome.refusal;
        return;
      }
      if (outcome.status !== 'succeeded') {
        logger.warn({ task_id: taskId, seq: f.seq, reason: outcome.reason }, 'image detection failed');
        results.push({ seq: f.seq, status: 'failed', error_code: errorCodeFor(outcome.failure) });
        continue;
      }
      const key = imageObjectKey(at, taskId, f.seq, f.type);
      try {
        await store.put(key, f.data, { contentType: CONTENT_TYPES[f.type], size: f.data.length });
      } catch (err) {
        logger.warn({ err, task_id: taskId, seq: f.seq }, 'image relay to object storage failed');
        results.push({ seq: f.seq, status: 'failed', error_code: errorCodeFor('relay_failed') });
        continue;
      }
      relayed.push(key);
      results.push({ seq: f.seq, status: 'succeeded', objects: outcome.objects.map(toImageObject) });
    }
  };
  const ended = await Promise.allSettled(
    Array.from({ length: Math.min(ctx.settings.detectConcurrency, files.length) }, () => worker()),
  );
  const thrown = ended.find((e): e is PromiseRejectedResult => e.status === 'rejected');
  if (thrown || stop !== undefined) {
    // Nothing of a refused call is kept: its relayed images would otherwise stay for free.
    if (relayed.length > 0)
      await store.delete(relayed).catch((err: unknown) => {
        logger.warn({ err, task_id: taskId }, 'the images of a refused call could not be deleted');
      });
    throw thrown ? thrown.reason : stop;
  }
  return inUploadOrder(results, files.length);
}

/** A request-level refusal: a fresh call is forgotten (key free again); a taken-over one lapses for the next retry. */
function forget(owned: OwnedClaim<CallRecord>): Promise<void> {
  return owned.fresh ? owned.release() : owned.letGo();
}
