import { randomUUID } from 'node:crypto';
import {
  ApiError,
  type Clock,
  type Identity,
  type InferenceClient,
  type SceneGate,
  type Logger,
  type ObjectStore,
  REASON,
  idempotencyInProgress,
  idempotencyMismatch,
} from '@vision/shared';
import { CONTENT_TYPES } from './domain/image-type';
import { requestFingerprint } from './domain/fingerprint';
import { decideExisting, holdIdFor } from './domain/idempotency';
import { imageObjectKey } from './domain/object-key';
import {
  type DetectionResponse,
  type ImageResult,
  chargeableUnits,
  detectionResponse,
  errorCodeFor,
  inUploadOrder,
  summarise,
  toImageObject,
  withUngrantedImagesFailed,
} from './domain/results';
import type { CallRecord, CallStore } from './store/call-store';
import type { QuotaClient } from './clients/quota-client';
import type { ImageTaskRecord, TasksClient } from './clients/tasks-client';
import type { UploadedImage } from './upload/multipart';

export const DEFAULT_SCENE = 'fire_smoke';

export interface DetectionSettings {
  holdTtlMs: number;
  leaseMs: number;
  idempotencyWaitMs: number;
  detectConcurrency: number;
  /** Poll period while waiting for a concurrent duplicate. */
  pollMs?: number;
}

export interface DetectionDeps {
  calls: CallStore;
  store: ObjectStore;
  quota: QuotaClient;
  tasks: TasksClient;
  inference: InferenceClient;
  scenes: SceneGate;
  clock: Clock;
  logger: Logger;
  settings: DetectionSettings;
}

export interface DetectionOutcome {
  status: 200 | 201;
  body: DetectionResponse;
}

/** The tasks service's record of an image call with these results (written again when they change). */
function imageTaskRecord(
  call: { taskId: string; idempotencyKey: string; sceneCode: string },
  results: readonly ImageResult[],
): ImageTaskRecord {
  return {
    task_id: call.taskId,
    request_id: call.idempotencyKey,
    scene_code: call.sceneCode,
    status: 'succeeded',
    results_summary: summarise(results),
  };
}

/**
 * Synchronous batch image detection (SPEC.md 4.6): idempotency, quota hold, relay, inference, task
 * record, settle. See docs/API.md "Image detection" for the rules this implements.
 */
export class ImageDetections {
  constructor(private readonly d: DetectionDeps) {}

  async detect(
    identity: Identity,
    idempotencyKey: string,
    sceneField: string | undefined,
    files: UploadedImage[],
  ): Promise<DetectionOutcome> {
    const sceneCode = sceneField === undefined || sceneField === '' ? DEFAULT_SCENE : sceneField;
    const fingerprint = requestFingerprint(
      sceneCode,
      files.map((f) => f.sha256),
    );
    const { calls, clock } = this.d;
    const started = Date.now();
    for (;;) {
      const now = clock.now();
      const taskId = randomUUID();
      const claimed = await calls.claim({
        subject: identity.subject,
        idempotencyKey,
        taskId,
        fingerprint,
        sceneCode,
        imageCount: files.length,
        leaseUntil: this.leaseFrom(now),
        createdAt: now,
      });
      if (claimed)
        return this.run(
          identity,
          { idempotencyKey, taskId, sceneCode, attempt: 0, fingerprint },
          files,
          true,
        );

      const existing = await calls.get(identity.subject, idempotencyKey);
      if (!existing) continue; // released between our insert and our read
      const decision = decideExisting(existing, fingerprint, clock.now());
      switch (decision.action) {
        case 'mismatch':
          throw idempotencyMismatch();
        case 'replay':
          return { status: 200, body: replayOf(existing) };
        case 'finish':
          if (
            await calls.takeSettling(
              identity.subject,
              idempotencyKey,
              existing.attempt,
              clock.now(),
              this.leaseFrom(clock.now()),
            )
          )
            return { status: 200, body: replayOf(await this.finishSettling(existing)) };
          continue;
        case 'take_over': {
          const at = clock.now();
          if (
            !(await calls.takeOver(
              identity.subject,
              idempotencyKey,
              existing.attempt,
              at,
              this.leaseFrom(at),
            ))
          )
            continue;
          // The dead attempt's hold was never settled: release it rather than wait for it to expire.
          await this.d.quota
            .settle(identity, holdIdFor(existing.taskId, existing.attempt), 0)
            .catch(() => undefined);
          this.d.logger.warn(
            { task_id: existing.taskId, attempt: existing.attempt + 1 },
            'taking over an interrupted image call',
          );
          return this.run(
            identity,
            {
              idempotencyKey,
              taskId: existing.taskId,
              sceneCode,
              attempt: existing.attempt + 1,
              fingerprint,
            },
            files,
            false,
          );
        }
        case 'wait':
          if (Date.now() - started > this.d.settings.idempotencyWaitMs) throw idempotencyInProgress();
          await sleep(this.d.settings.pollMs ?? 50);
          continue;
      }
    }
  }

  private async run(
    identity: Identity,
    call: { idempotencyKey: string; taskId: string; sceneCode: string; attempt: number; fingerprint: string },
    files: UploadedImage[],
    fresh: boolean,
  ): Promise<DetectionOutcome> {
    const { calls, quota, inference, clock, logger, settings } = this.d;
    const subject = identity.subject;
    const holdId = holdIdFor(call.taskId, call.attempt);
    const heartbeat = setInterval(
      () => {
        calls
          .renewLease(subject, call.idempotencyKey, call.attempt, this.leaseFrom(clock.now()))
          .catch(() => undefined);
      },
      Math.max(250, Math.floor(settings.leaseMs / 3)),
    );
    heartbeat.unref();
    try {
      // Nothing is held yet: any refusal here forgets the call so that the key can be used again.
      try {
        if (inference.isOpen())
          throw new ApiError(
            'OP-TASK-BREAKER-OPEN',
            'The inference backend is failing; new requests are not accepted for now',
            { reason: REASON.breaker_open },
          );
        await this.d.scenes.requireEnabled(call.sceneCode);
        await quota.hold(identity, holdId, files.length, settings.holdTtlMs);
      } catch (err) {
        await this.forget(subject, call, fresh);
        throw err;
      }

      let results: ImageResult[];
      try {
        results = await this.process(identity, call.taskId, call.sceneCode, files);
      } catch (err) {
        await quota.settle(identity, holdId, 0).catch(() => undefined);
        await this.forget(subject, call, fresh);
        throw err;
      }
      const units = chargeableUnits(results);

      // The task record is written before anything is charged: a 201 always has its record.
      const written = await this.d.tasks.writeImageTask(identity, imageTaskRecord(call, results));
      if (!written) {
        await quota.settle(identity, holdId, 0).catch(() => undefined);
        // Keep the task id: a retry with the same key takes the call over and runs it again.
        await calls.renewLease(subject, call.idempotencyKey, call.attempt, clock.now());
        throw new ApiError(
          'OP-SYS-UNAVAILABLE',
          'The task record could not be written; retry with the same Idempotency-Key',
          {
            reason: REASON.task_record_unavailable,
          },
        );
      }

      if (!(await calls.markSettling(subject, call.idempotencyKey, call.attempt, results, units))) {
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
        if (settled === 'exhausted')
          final = await this.failUngranted(identity, { ...call, subject, holdId }, results);
        if (settled === 'gone')
          logger.warn({ task_id: call.taskId, units }, 'quota refused the settle (hold gone)');
        await calls.markCompleted(subject, call.idempotencyKey, call.attempt, clock.now());
      }
      return { status: 201, body: detectionResponse(call.taskId, call.idempotencyKey, final, false) };
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** Relays every image to object storage and runs inference on it; one image's failure is its own. */
  private async process(
    identity: Identity,
    taskId: string,
    sceneCode: string,
    files: UploadedImage[],
  ): Promise<ImageResult[]> {
    const { store, inference, clock, logger } = this.d;
    const at = clock.now();
    const results: ImageResult[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < files.length) {
        const f = files[next++];
        const key = imageObjectKey(at, taskId, f.seq, f.type);
        try {
          await store.put(key, f.data, { contentType: CONTENT_TYPES[f.type], size: f.data.length });
        } catch (err) {
          logger.warn({ err, task_id: taskId, seq: f.seq }, 'image relay to object storage failed');
          results.push({ seq: f.seq, status: 'failed', error_code: errorCodeFor('relay_failed') });
          continue;
        }
        const outcome = await inference.detect(identity, sceneCode, f.data, CONTENT_TYPES[f.type]);
        if (outcome.status === 'succeeded')
          results.push({ seq: f.seq, status: 'succeeded', objects: outcome.objects.map(toImageObject) });
        else {
          logger.warn({ task_id: taskId, seq: f.seq, reason: outcome.reason }, 'image detection failed');
          results.push({ seq: f.seq, status: 'failed', error_code: errorCodeFor(outcome.failure) });
        }
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(this.d.settings.detectConcurrency, files.length) }, () => worker()),
    );
    return inUploadOrder(results, files.length);
  }

  /**
   * Quota refused the settle (the hold expired and the day filled up meanwhile): the succeeded images
   * are not granted. They become failed with OP-QUOTA-DAILY-EXHAUSTED in the stored results (so that
   * replays agree), the task record's summary says so, and the hold is closed with 0 units. Returns
   * the new results.
   */
  private async failUngranted(
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
    await this.d.calls.replaceResults(call.subject, call.idempotencyKey, call.attempt, failed, 0);
    const rewritten = await this.d.tasks
      .writeImageTask(identity, imageTaskRecord(call, failed))
      .catch(() => false);
    if (!rewritten)
      this.d.logger.warn({ task_id: call.taskId }, 'the task record still counts the ungranted images');
    await this.d.quota.settle(identity, call.holdId, 0).catch(() => undefined);
    this.d.logger.warn(
      { task_id: call.taskId, images: chargeableUnits(results) },
      'quota did not grant the images of an expired hold; they are reported failed',
    );
    return failed;
  }

  /** Settles a call whose results are stored and marks it completed; returns the record to replay. */
  private async finishSettling(rec: CallRecord): Promise<CallRecord> {
    const identity: Identity = { subject: rec.subject, requestId: `images-recover-${rec.taskId}` };
    const holdId = holdIdFor(rec.taskId, rec.attempt);
    const outcome = await this.d.quota.settle(identity, holdId, rec.units ?? 0);
    let done = rec;
    if (outcome === 'exhausted') {
      const results = await this.failUngranted(identity, { ...rec, holdId }, rec.results ?? []);
      done = { ...rec, results, units: 0 };
    }
    if (outcome !== 'retry_later')
      await this.d.calls.markCompleted(rec.subject, rec.idempotencyKey, rec.attempt, this.d.clock.now());
    return done;
  }

  /** Settles calls left in `settling` by a crashed or interrupted owner (run at start and periodically). */
  async recoverLapsed(limit = 100): Promise<number> {
    const { calls, clock } = this.d;
    const lapsed = await calls.lapsedSettling(clock.now(), limit);
    let n = 0;
    for (const rec of lapsed) {
      if (
        !(await calls.takeSettling(
          rec.subject,
          rec.idempotencyKey,
          rec.attempt,
          clock.now(),
          this.leaseFrom(clock.now()),
        ))
      )
        continue;
      await this.finishSettling(rec);
      n += 1;
    }
    return n;
  }

  private async forget(
    subject: string,
    call: { idempotencyKey: string; attempt: number },
    fresh: boolean,
  ): Promise<void> {
    // A taken-over call keeps its record (and task id); lapse it so that the next retry can take it again.
    if (fresh) await this.d.calls.release(subject, call.idempotencyKey, call.attempt);
    else await this.d.calls.renewLease(subject, call.idempotencyKey, call.attempt, this.d.clock.now());
  }

  private leaseFrom(now: Date): Date {
    return new Date(now.getTime() + this.d.settings.leaseMs);
  }
}

function replayOf(rec: CallRecord): DetectionResponse {
  return detectionResponse(rec.taskId, rec.idempotencyKey, rec.results ?? [], true);
}

function sleep(ms: number): Promise<void> {
  return new Promise((res) => setTimeout(res, ms));
}
