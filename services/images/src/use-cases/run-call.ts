/**
 * Running one image call that this request owns (fresh, or taken over from a dead owner): breaker and
 * scene gate, quota reservation, inference then relay per image, results and task record, then the spend
 * reported to quota after the answer (SPEC.md 4.6).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ApiError, type FrameSize, type Identity, type OwnedClaim, type ZoneRule } from '@vision/shared';
import { CONTENT_TYPES } from '../domain/image-type';
import { withZoneCounts } from '../domain/image-zones';
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
import type { CallRecord } from '../store/call-store';
import type { CallRef, UploadedImage } from '../domain/call';
import type { CallControl, DetectionDeps } from './context';
import type { Reservation } from './quota-leases';

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
  zones?: readonly ZoneRule[],
): Promise<DetectionOutcome> {
  const { calls, leases, clock, logger } = ctx;
  const call: CallRef = { ref: owned.ref, taskId: owned.taskId, sceneCode };
  if (!owned.fresh)
    // The dead attempt reserved from a lease of its own process, which returns its units when it expires.
    logger.warn(
      { task_id: call.taskId, attempt: call.ref.attempt },
      'running an interrupted image call again',
    );
  // Nothing is reserved yet: any refusal here forgets the call so that the key can be used again.
  try {
    if (ctx.inference.isOpen()) throw ctx.inference.breakerRefusal('image calls');
    await ctx.scenes.requireEnabled(sceneCode);
  } catch (err) {
    await forget(owned);
    throw err;
  }
  // The call's units are reserved from the subject's quota lease (locally; a round trip to quota only when
  // the lease is missing, ended or short) while the first images are detected: nothing is written and no
  // further image is taken before the reservation is granted (processImages). It is taken one turn of the
  // event loop after the first images, so that inference starts decoding the first image before a lease
  // request takes the thread (docs/PERFORMANCE.md, "The request path").
  const held = nextTurn().then(() => leases.reserve(identity, files.length, control.deadline));
  const holdError = held.then(
    () => undefined,
    (err: unknown) => err,
  );

  let results: ImageResult[];
  let reserved: Reservation;
  try {
    const detected = await processImages(ctx, identity, call.taskId, sceneCode, files, held, control);
    results = detected.results;
    // The counts per zone are stored with the results, so that a replay of the call answers them as they were.
    if (zones) results = withZoneCounts(results, detected.sizes, zones);
    reserved = await held;
  } catch (err) {
    const refused = await holdError;
    if (refused === undefined) leases.release(await held);
    await forget(owned);
    throw refused ?? err;
  }
  const units = chargeableUnits(results);

  // Storing the results writes the call's task record to the outbox too (vision.image-calls -> tasks), and
  // the lease its units are charged to.
  if (!(await calls.storeResults(call.ref, results, units, reserved.leaseId))) {
    // Another request took this call over while we ran (our claim lapsed): let it win.
    leases.release(reserved);
    throw new ApiError(
      'OP-SYS-UNAVAILABLE',
      'The request was interrupted; retry with the same Idempotency-Key',
    );
  }
  // The spend is reported to quota after the answer (the call stays `settling` until quota recorded it).
  leases.spent(identity, reserved, { ...call, results }, units);
  if (units === 0) await calls.complete(call.ref, clock.now());
  return { status: 201, body: detectionResponse(call.taskId, call.ref.key, results, false) };
}

/**
 * Detects every image, then relays to object storage only the images inference decoded: an image that
 * does not decode (or whose detection failed) is never written, so it cannot be kept for free. One
 * image's failure is its own, except that once one image's detect timed out the images not sent yet
 * fail at once (the backend is not answering: the call waits one timeout, not one per image). Until the
 * quota hold is granted only the first image of each worker is detected (at most detectConcurrency
 * images of a refused call are detected for nothing) and nothing is written; a refused hold fails the
 * whole call.
 *
 * The whole call is refused (nothing charged, the key free again) when its caller has gone, its deadline
 * passed, inference shed one of its images for want of room or time, or the breaker refused one (503
 * OP-TASK-BREAKER-OPEN; docs/OVERLOAD.md): no further image goes to inference, the images in flight are
 * awaited, and the images already relayed are deleted. `sizes`: each succeeded image's size in pixels, by seq.
 */
async function processImages(
  ctx: DetectionDeps,
  identity: Identity,
  taskId: string,
  sceneCode: string,
  files: UploadedImage[],
  held: Promise<unknown>,
  control: CallControl,
): Promise<{ results: ImageResult[]; sizes: Map<number, FrameSize> }> {
  const { store, inference, clock, logger } = ctx;
  const at = clock.now();
  const results: ImageResult[] = [];
  const sizes = new Map<number, FrameSize>();
  const relayed: string[] = [];
  /** Why the call stops early: the first refusal seen. */
  let stop: unknown;
  /** An image's detect timed out: the images not sent yet fail at once rather than wait as long again. */
  let silent = false;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length && stop === undefined) {
      if (control.signal?.aborted) {
        stop = control.signal.reason;
        return;
      }
      const f = files[next++];
      if (silent) {
        results.push({ seq: f.seq, status: 'failed', error_code: errorCodeFor('inference_unavailable') });
        continue;
      }
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
        if (outcome.reason === 'timeout') silent = true;
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
      sizes.set(f.seq, outcome.image);
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
  return { results: inUploadOrder(results, files.length), sizes };
}

/** A request-level refusal: a fresh call is forgotten (key free again); a taken-over one lapses for the next retry. */
function forget(owned: OwnedClaim<CallRecord>): Promise<void> {
  return owned.fresh ? owned.release() : owned.letGo();
}
