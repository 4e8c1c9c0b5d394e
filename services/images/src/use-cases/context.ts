/** What the image detection use cases work with (application ports and settings). */
import type { Clock, InferenceClient, Logger, ObjectStore, SceneGate } from '@vision/shared';
import type { QuotaClient } from '../clients/quota-client';
import type { QuotaLeases } from './quota-leases';
import type { CallStore } from '../store/call-store';

export interface DetectionSettings {
  /** How long a call's Idempotency-Key claim holds without renewal (IMAGES_CALL_CLAIM_MS). */
  claimMs: number;
  idempotencyWaitMs: number;
  detectConcurrency: number;
  /** Poll period while waiting for a concurrent duplicate. */
  pollMs?: number;
}

export interface DetectionDeps {
  calls: CallStore;
  store: ObjectStore;
  /** The quota of calls: reserved from leases, spends reported after the answer. */
  leases: Pick<QuotaLeases, 'reserve' | 'release' | 'spent' | 'reportNow'>;
  /** Settles the hold of a call recorded with one (no lease). */
  quota: Pick<QuotaClient, 'settle'>;
  inference: Pick<InferenceClient, 'detect' | 'isOpen' | 'breakerRefusal'>;
  scenes: Pick<SceneGate, 'requireEnabled' | 'requireSceneCode'>;
  clock: Clock;
  logger: Logger;
  settings: DetectionSettings;
}

/** What may stop a call early: its caller went away or its deadline passed (callSignal), and that deadline. */
export interface CallControl {
  /** Aborted with the reason the call stops; checked before each image goes to inference. */
  signal?: AbortSignal;
  /** The caller's deadline (epoch ms), passed on to inference. */
  deadline?: number;
}
