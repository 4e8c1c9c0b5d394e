/**
 * Synchronous batch image detection (SPEC.md 4.6): the idempotency of a call (claim, replay, wait for
 * a running duplicate, take over a dead owner's call, finish a dead owner's settle), then runCall.
 * See docs/API.md "Image detection" for the rules this implements.
 */
import { randomUUID } from 'node:crypto';
import { type Identity, awaitFirstRequest, idempotencyInProgress, idempotencyMismatch } from '@vision/shared';
import { requestFingerprint } from '../domain/fingerprint';
import { decideExisting, holdIdFor } from '../domain/idempotency';
import { type DetectionResponse, detectionResponse } from '../domain/results';
import type { UploadedImage } from '../http/upload/multipart';
import type { CallRecord } from '../store/call-store';
import { type DetectionDeps, leaseFrom } from './context';
import { type DetectionOutcome, runCall } from './run-call';
import { finishSettling, recoverLapsed } from './settle-call';

export const DEFAULT_SCENE = 'fire_smoke';
export type { DetectionDeps, DetectionSettings } from './context';
export type { DetectionOutcome } from './run-call';

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
    const ctx = this.d;
    // Each look either settles the request (an outcome) or says to look again after a pause.
    return awaitFirstRequest(
      () => this.attempt(identity, { idempotencyKey, sceneCode, fingerprint }, files),
      {
        waitMs: ctx.settings.idempotencyWaitMs,
        pollMs: ctx.settings.pollMs,
        onTimeout: () => {
          throw idempotencyInProgress();
        },
      },
    );
  }

  /** One look at the key: an outcome, or undefined while another request is running the call. */
  private async attempt(
    identity: Identity,
    req: { idempotencyKey: string; sceneCode: string; fingerprint: string },
    files: UploadedImage[],
  ): Promise<DetectionOutcome | undefined> {
    const ctx = this.d;
    const { calls, clock } = ctx;
    const { idempotencyKey, sceneCode, fingerprint } = req;
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
        leaseUntil: leaseFrom(ctx, now),
        createdAt: now,
      });
      if (claimed) return runCall(ctx, identity, { ...req, taskId, attempt: 0 }, files, true);

      const existing = await calls.get(identity.subject, idempotencyKey);
      if (!existing) continue; // released between our insert and our read
      const decision = decideExisting(existing, fingerprint, clock.now());
      switch (decision.action) {
        case 'mismatch':
          throw idempotencyMismatch();
        case 'replay':
          return { status: 200, body: replayOf(existing) };
        case 'finish': {
          const at = clock.now();
          if (
            await calls.takeSettling(
              identity.subject,
              idempotencyKey,
              existing.attempt,
              at,
              leaseFrom(ctx, at),
            )
          )
            return { status: 200, body: replayOf(await finishSettling(ctx, existing)) };
          continue;
        }
        case 'take_over': {
          const at = clock.now();
          if (
            !(await calls.takeOver(
              identity.subject,
              idempotencyKey,
              existing.attempt,
              at,
              leaseFrom(ctx, at),
            ))
          )
            continue;
          // The dead attempt's hold was never settled: release it rather than wait for it to expire.
          await ctx.quota
            .settle(identity, holdIdFor(existing.taskId, existing.attempt), 0)
            .catch(() => undefined);
          ctx.logger.warn(
            { task_id: existing.taskId, attempt: existing.attempt + 1 },
            'taking over an interrupted image call',
          );
          const call = { ...req, taskId: existing.taskId, attempt: existing.attempt + 1 };
          return runCall(ctx, identity, call, files, false);
        }
        case 'wait':
          return undefined;
      }
    }
  }

  /** Settles calls left in `settling` by a crashed or interrupted owner. */
  recoverLapsed(limit = 100): Promise<number> {
    return recoverLapsed(this.d, limit);
  }
}

function replayOf(rec: CallRecord): DetectionResponse {
  return detectionResponse(rec.taskId, rec.idempotencyKey, rec.results ?? [], true);
}
