import { z } from 'zod';
import { env } from '@vision/shared';

const HOUR_MS = 60 * 60 * 1000;

/** Environment variables of webhook delivery (docs/OPERATIONS.md, "Webhooks"). */
export const webhookShape = {
  /**
   * Key that seals the endpoints' signing secrets in the database (AES-256-GCM); when unset, one derived
   * from the results service's identity key (the same for every replica).
   * Changing it makes the stored secrets unreadable: rotate every endpoint's secret after a change.
   */
  RESULTS_WEBHOOK_SECRET_KEY: z.string().min(16, 'expected at least 16 characters').optional(),
  /** Webhook URLs may point at loopback, private and link-local addresses (never cloud metadata). */
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: env.bool(false),
  /** Most endpoints one subject may register. */
  RESULTS_WEBHOOK_MAX_ENDPOINTS: env.int(10, 1, 1000),
  /** Deadline of one delivery attempt (connect, send, status line); past it the attempt failed. */
  RESULTS_WEBHOOK_TIMEOUT_MS: env.int(10_000, 100, 60_000),
  /** First retry delay; each retry doubles it (with jitter) up to RESULTS_WEBHOOK_RETRY_MAX_MS. */
  RESULTS_WEBHOOK_RETRY_BASE_MS: env.int(5_000, 10, HOUR_MS),
  /** Longest pause between two attempts (a receiver's Retry-After is honoured up to the horizon). */
  RESULTS_WEBHOOK_RETRY_MAX_MS: env.int(HOUR_MS, 10, 24 * HOUR_MS),
  /** How long a delivery is retried from its first attempt before it is dead. */
  RESULTS_WEBHOOK_RETRY_HORIZON_MS: env.int(24 * HOUR_MS, 1_000, 7 * 24 * HOUR_MS),
  /** How long a rotated-out secret keeps signing beside the new one. */
  RESULTS_WEBHOOK_ROTATION_OVERLAP_MS: env.int(24 * HOUR_MS, 0, 7 * 24 * HOUR_MS),
  /** Pause between dispatcher looks for due deliveries when nothing wakes it. */
  RESULTS_WEBHOOK_POLL_MS: env.int(1_000, 10, 60_000),
  /** Attempts one dispatcher process runs at once. */
  RESULTS_WEBHOOK_CONCURRENCY: env.int(16, 1, 256),
  /** `vision.task.frames_available`: at most one per task per this many ms; 0 turns the event off. */
  RESULTS_WEBHOOK_FRAMES_INTERVAL_MS: env.int(10_000, 0, HOUR_MS),
  /** Delivered and dead deliveries (with their attempts) are kept this many days in the delivery log. */
  RESULTS_WEBHOOK_LOG_RETENTION_DAYS: env.int(30, 1, 365),
};
