import type { KeyObject } from 'node:crypto';
import { z } from 'zod';
import {
  commonShape,
  deriveSecret,
  env,
  loadCallingIdentity,
  loadJobGrantKey,
  loadConfig,
  type CallingIdentity,
} from '@vision/shared';
import { DEFAULT_LIMIT, MAX_LIMIT, MIN_LIMIT } from './domain/read-query';
import { webhookShape } from './webhook-config';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Environment variables of the results service (besides the common ones). */
export const resultsShape = {
  ...commonShape,
  RESULTS_PORT: env.port(8103),
  TASKS_URL: env.url().default('http://127.0.0.1:8101'),
  /** The job-running inference backend, asked for the pictures of events (docs/EVIDENCE.md). */
  INFERENCE_URL: env.url().default('http://127.0.0.1:8105'),
  /** The longest results waits for one picture; a slower one is `capture_failed` (and counts against the breaker). */
  RESULTS_SNAPSHOT_TIMEOUT_MS: env.int(3_000, 100, 60_000),
  /** Pictures of one evaluation step asked for at once. */
  RESULTS_SNAPSHOT_CONCURRENCY: env.int(4, 1, 64),
  /**
   * Key for cursor signatures; when unset, one derived from the results service's identity key (the same
   * for every replica). Changing either invalidates cursors in flight.
   */
  RESULTS_CURSOR_SECRET: z.string().min(16, 'expected at least 16 characters').optional(),
  /** Page size when a read gives no `limit`. */
  RESULTS_DEFAULT_LIMIT: env.int(DEFAULT_LIMIT, MIN_LIMIT, MAX_LIMIT),
  /** How long after a terminal status without an end marker a task's frames count as complete. */
  RESULTS_END_GRACE_MS: env.int(5 * 60 * 1000, 0),
  /**
   * How long ingested frames wait for others to join their INSERT when no write is in flight: one
   * statement for many frames (workers/frame-writer.ts). Adds at most this much to capture -> stored.
   */
  RESULTS_INGEST_LINGER_MS: env.int(50, 0, 5_000),
  /** Longest life of one results stream (SSE); the client reconnects with Last-Event-ID after it. */
  RESULTS_STREAM_MAX_MS: env.int(60 * 60 * 1000, 1_000),
  /** Longest silence on a results stream before a heartbeat comment; keep under the gateway's idle cut. */
  RESULTS_STREAM_HEARTBEAT_MS: env.int(15_000, 100, 120_000),
  /** Pause between reads of a results stream that has caught up with the stored frames. */
  RESULTS_STREAM_POLL_MS: env.int(500, 10, 10_000),
  /** A stream whose reader took nothing for this long, every buffer on the way full, is closed. */
  RESULTS_STREAM_STALL_MS: env.int(30_000, 100, 600_000),
  /** Most stored frames one analytics replay request evaluates; a longer task is replayed page by page. */
  RESULTS_REPLAY_MAX_FRAMES: env.int(10_000, 1, 1_000_000),
  /** Replays evaluated at once by one replica; the others wait their turn in the `replays` queue. */
  RESULTS_REPLAY_MAX_IN_FLIGHT: env.int(2, 1, 64),
  /** Longest a replay waits for its turn; one expected to wait longer is refused at once (503 overloaded). */
  RESULTS_REPLAY_QUEUE_MAX_WAIT_MS: env.int(5_000, 0, 20_000),
  /** Pause between retention passes; 0 turns the timer off. */
  RESULTS_JANITOR_INTERVAL_MS: env.int(60_000, 0),
  /** Most frames one retention DELETE removes. */
  RESULTS_DELETE_BATCH: env.int(5_000, 1, 100_000),
  /** Retention for frames whose task never became known (and for tombstones of purged tasks). */
  RESULTS_ORPHAN_RETENTION_DAYS: env.int(90, 1),
  ...webhookShape,
};

export type ResultsConfig = z.infer<z.ZodObject<typeof resultsShape>>;

export interface ResolvedResultsConfig extends ResultsConfig {
  identity: CallingIdentity;
  /** Tasks' public key: a frame or end is stored only under tasks' grant for its task (job-grant.ts). */
  jobGrantKey: KeyObject;
  cursorSecret: string;
  /** Key that seals webhook signing secrets at rest (RESULTS_WEBHOOK_SECRET_KEY, else derived from results' identity key). */
  webhookSealKey: string;
  orphanRetentionMs: number;
}

export function loadResultsConfig(source: Record<string, string | undefined>): ResolvedResultsConfig {
  const cfg = loadConfig(resultsShape, source);
  const identity = loadCallingIdentity(cfg.VISION_IDENTITY_DIR, 'results');
  return {
    ...cfg,
    identity,
    jobGrantKey: loadJobGrantKey(cfg.VISION_IDENTITY_DIR),
    cursorSecret: cfg.RESULTS_CURSOR_SECRET ?? deriveSecret(identity.signer, 'results-cursor'),
    webhookSealKey: cfg.RESULTS_WEBHOOK_SECRET_KEY ?? deriveSecret(identity.signer, 'results-webhook-seal'),
    orphanRetentionMs: cfg.RESULTS_ORPHAN_RETENTION_DAYS * DAY_MS,
  };
}
