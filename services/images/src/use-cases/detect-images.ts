/**
 * Synchronous batch image detection (SPEC.md 4.6): the call under its Idempotency-Key through the shared
 * claim mechanism (packages/shared idempotency/claims.ts: claim, replay, wait for a running duplicate,
 * take over a dead owner's call, finish a dead owner's settle), with this service's steps: runCall,
 * the replay of the stored results, and finishSettling. See docs/API.md "Image detection".
 */
import { type Identity, IdempotentRequests } from '@vision/shared';
import { requestFingerprint } from '../domain/fingerprint';
import { zonesFingerprint, zonesOfField } from '../domain/image-zones';
import { detectionResponse } from '../domain/results';
import type { SpentCall, UploadedImage } from '../domain/call';
import type { CallData, CallRecord } from '../store/call-store';
import type { CallControl, DetectionDeps } from './context';
import { type DetectionOutcome, runCall } from './run-call';
import type { SpendOutcome } from '../clients/quota-client';
import { finishSettling, spendRecorded } from './settle-call';

export const DEFAULT_SCENE = 'fire_smoke';
export type { CallControl, DetectionDeps, DetectionSettings } from './context';
export type { DetectionOutcome } from './run-call';

export class ImageDetections {
  private readonly claims: IdempotentRequests<CallRecord, CallData>;
  private readonly finish = (rec: CallRecord): Promise<void> => finishSettling(this.d, rec);

  constructor(private readonly d: DetectionDeps) {
    this.claims = new IdempotentRequests({
      store: d.calls,
      clock: d.clock,
      logger: d.logger,
      name: 'image call',
      settings: {
        leaseMs: d.settings.claimMs,
        waitMs: d.settings.idempotencyWaitMs,
        pollMs: d.settings.pollMs,
      },
    });
  }

  async detect(
    identity: Identity,
    idempotencyKey: string,
    sceneField: string | undefined,
    files: UploadedImage[],
    call: CallControl = {},
    zonesField?: string,
  ): Promise<DetectionOutcome> {
    // SPEC.md 4.6: a missing field means fire_smoke; an empty one is a scene that does not exist.
    const sceneCode = sceneField === undefined ? DEFAULT_SCENE : sceneField;
    // A value that is no scene code at all is refused before the claim stores it (it may hold bytes a
    // database refuses, such as NUL; found by schemathesis). Whether the scene is enabled is checked after
    // the claim, so that the replay of a finished call does not depend on the scene being enabled now.
    this.d.scenes.requireSceneCode(sceneCode);
    // Zones are validated before the claim too: a refused rule set stores nothing.
    const zones = zonesOfField(zonesField);
    const fingerprint = requestFingerprint(
      sceneCode,
      files.map((f) => f.sha256),
      zones && zonesFingerprint(zones),
    );
    return this.claims.handle(
      {
        subject: identity.subject,
        key: idempotencyKey,
        fingerprint,
        data: { sceneCode, imageCount: files.length },
      },
      {
        run: (owned) => runCall(this.d, identity, owned, sceneCode, files, call, zones),
        // Settling calls replay too: their results are final, only the quota settle may be outstanding.
        replay: async (rec) => ({
          status: 200,
          body: detectionResponse(rec.taskId, rec.key, rec.results ?? [], true),
        }),
        finish: this.finish,
      },
    );
  }

  /** What becomes of a call once quota recorded its spend (the report loop of QuotaLeases). */
  spendRecorded(call: SpentCall, outcome: SpendOutcome): Promise<void> {
    return spendRecorded(this.d, call, outcome);
  }

  /** Settles calls left in `settling` by a crashed or interrupted owner (the sweeper). */
  recoverLapsed(limit = 100): Promise<number> {
    return this.claims.finishLapsed(this.finish, limit);
  }
}
