/**
 * What the use cases need from the outside world (application ports). The adapters live in
 * clients/ (quota over HTTP), @vision/shared (inference client, object store) and store/ (knex); the
 * use-case tests give them in-memory fakes (test/fakes.ts), so they need neither HTTP nor a sibling
 * service.
 */
import { randomUUID } from 'node:crypto';
import type { Clock, Identity, InferenceClient, Logger, ObjectStore } from '@vision/shared';
import type { ChargeOutcome } from './clients/quota-client';
import type { StreamUrlSeal } from './store/stream-url-seal';
import type { TaskStore } from './store/task-store';

export interface QuotaPort {
  /** Charges one video task unit under `chargeId` (idempotent: the task id); `deadline`: the caller's (epoch ms). */
  charge(identity: Identity, chargeId: string, deadline?: number): Promise<ChargeOutcome>;
  /** Refunds to the original day (idempotent); false when quota could not be reached (retried later). */
  refund(identity: Identity, chargeId: string): Promise<boolean>;
}

export type InferencePort = Pick<
  InferenceClient,
  'submit' | 'getJob' | 'getJobs' | 'stopJob' | 'still' | 'isOpen' | 'state' | 'breakerRefusal'
>;

export type ObjectStorePort = Pick<ObjectStore, 'delete'>;

/** Wakes background loops after a use case changed something they act on. */
export interface Signals {
  /** Outbox rows were written: publish them soon. */
  eventsWritten(): void;
  /** A task entered `stopping`: resolves after the stop driver ran once more. */
  driveStops(): Promise<void>;
}

export interface TaskSettings {
  maxActive: number;
  /**
   * Inference job slots shared between subjects when no SlotSource reads them from inference (TASKS_INFERENCE_SLOTS,
   * else INFERENCE_MAX_JOBS); file tasks queue beyond them (domain/fair-share.ts).
   */
  inferenceSlots: number;
  queueMax: number;
  queueMaxWaitMs: number;
  maintenance: boolean;
  idempotencyWaitMs: number;
  resolveGraceMs: number;
  /** TASKS_JOB_RESTARTS: starts of a lost job before its task is refunded (domain/lost-job.ts). */
  jobRestarts: number;
  recoverAfterMs: number;
  stopWaitMs: number;
  pollIntervalMs: number;
  reconcileIntervalMs: number;
  janitorIntervalMs: number;
  outboxIntervalMs?: number;
  /** TASKS_OUTBOX_LINGER_MS (default 0: the relay runs right after each commit). */
  outboxLingerMs?: number;
}

/** The inference job slots shared between subjects now (clients/inference-slots.ts). */
export interface SlotSource {
  current(): Promise<number>;
}

/** Everything a use case or worker works with. */
export interface TaskContext {
  store: TaskStore;
  quota: QuotaPort;
  inference: InferencePort;
  objects: ObjectStorePort;
  clock: Clock;
  logger: Logger;
  settings: TaskSettings;
  signals: Signals;
  /** Tasks whose create request is being handled by this process: background loops leave them alone. */
  inflight: Set<string>;
  /** Seals the stream URL written with a task and opens it for the job submission. */
  streamUrls: StreamUrlSeal;
  /** The slots of the live inference replicas as inference reports them; without it, `settings.inferenceSlots`. */
  slots?: SlotSource;
}

/** The inference job slots shared between subjects now. */
export function inferenceSlots(ctx: TaskContext): Promise<number> {
  return ctx.slots ? ctx.slots.current() : Promise.resolve(ctx.settings.inferenceSlots);
}

/** The identity background work acts under for `subject`. */
export function workerIdentity(subject: string): Identity {
  return { subject, requestId: `tasks-worker-${randomUUID()}` };
}
