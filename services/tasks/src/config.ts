import { z } from 'zod';
import { RULE_LIMITS, VIDEO_UPLOAD, commonShape, env, loadConfig } from '@vision/shared';

/** Environment variables of the tasks service (validated once at start). */
export const tasksShape = {
  TASKS_PORT: env.port(8101),
  QUOTA_URL: z.string().url('expected a URL').default('http://127.0.0.1:8102'),
  INFERENCE_URL: z.string().url('expected a URL').default('http://127.0.0.1:8105'),
  /** Asked for an image call whose record has not arrived yet (docs/INTERNAL.md, images). */
  IMAGES_URL: z.string().url('expected a URL').default('http://127.0.0.1:8104'),
  /** Business threshold frozen into each new task (SPEC.md 4.4), 0..1. */
  TASKS_BUSINESS_THRESHOLD: env.number(0.8, 0, 1),
  /** Standalone/dev only: let stream URLs point at private, loopback and link-local addresses. */
  STREAM_ALLOW_PRIVATE_NETWORKS: env.bool(false),
  TASKS_PROBE_TIMEOUT_MS: env.int(5000, 100, 60_000),
  TASKS_FFPROBE_PATH: env.str('ffprobe'),
  /** 512 MB (SPEC 4.2; the gateway's video body cap is this plus 1 MiB of multipart overhead). */
  TASKS_MAX_VIDEO_BYTES: env.int(VIDEO_UPLOAD.maxFileBytes, 1),
  TASKS_MAX_ACTIVE: env.int(3, 1, 10_000),
  /** Rules versions one task may have; a PUT past it is refused (docs/ANALYTICS.md, "Limits"). */
  TASKS_RULES_MAX_VERSIONS: env.int(1000, 1, 1_000_000),
  /** Bytes of the distinct rule sets one task stores (each once, by content); at least one largest set. */
  TASKS_RULES_MAX_BYTES: env.int(1_048_576, RULE_LIMITS.maxBytes, 1_073_741_824),
  TASKS_MAINTENANCE: env.bool(false),
  /**
   * Job slots of the inference backend shared fairly between subjects (domain/fair-share.ts); when
   * unset, INFERENCE_MAX_JOBS (one process or one environment for both), else 4 (its default).
   */
  TASKS_INFERENCE_SLOTS: z.coerce.number().int('expected an integer').min(1).max(100_000).optional(),
  INFERENCE_MAX_JOBS: z.coerce.number().int('expected an integer').min(1).max(100_000).optional(),
  /** File tasks that may wait for a slot, all subjects together; beyond it 503 queue_full. */
  TASKS_QUEUE_MAX: env.int(100, 0, 100_000),
  /** Task creations (probe, upload) that run at once; more wait their turn (docs/OVERLOAD.md). */
  TASKS_CREATE_MAX_IN_FLIGHT: env.int(16, 1, 1000),
  /** The longest a task creation waits for its turn: one expected to wait longer is refused (503 overloaded). */
  TASKS_CREATE_MAX_WAIT_MS: env.int(2000, 0, 600_000),
  /** A file task queued this long is refunded (queue_timeout). */
  TASKS_QUEUE_MAX_WAIT_MS: env.int(6 * 3_600_000, 1000, 7 * 86_400_000),
  /**
   * Key that seals the stored stream URLs (AES-256-GCM); when unset, one derived from the tasks service's
   * identity key (the same for every replica). Changing it makes the stored URLs unreadable.
   */
  TASKS_STREAM_URL_KEY: z.string().min(16, 'expected at least 16 characters').optional(),
  /** Bearer credential of the operator endpoints under /internal/v1/admin; those endpoints are off without it. */
  TASKS_ADMIN_TOKEN: z.string().min(16, 'expected at least 16 characters').optional(),
  /** Time limit of one call to the inference backend, however slow its kind was measured. */
  TASKS_BACKEND_TIMEOUT_MS: env.int(5000, 50, 120_000),
  /**
   * Inference answering nothing this long while a call waits opens the breaker; also the timeout of a kind
   * of call (job start, job reads, scene list) not measured yet, and the shortest timeout of a measured one.
   * Above STREAM_DNS_TIMEOUT_MS: a job start waits on the resolution of the caller's stream host.
   */
  TASKS_BREAKER_HANG_MS: env.int(3000, 10, 120_000),
  TASKS_BREAKER_ERROR_PERCENT: env.int(50, 1, 100),
  TASKS_BREAKER_RESET_MS: env.int(30_000, 10, 3_600_000),
  TASKS_BREAKER_VOLUME: env.int(5, 0, 10_000),
  TASKS_BREAKER_WINDOW: env.int(10, 1, 10_000),
  TASKS_POLL_INTERVAL_MS: env.int(2000, 10, 600_000),
  TASKS_RECONCILE_INTERVAL_MS: env.int(5000, 10, 600_000),
  /** A resolving task whose job is still absent this long after the submission is settled as not created. */
  TASKS_RESOLVE_GRACE_MS: env.int(30_000, 0, 86_400_000),
  /** Times a running task's job that the backend lost is started again before the task is refunded. */
  TASKS_JOB_RESTARTS: env.int(3, 0, 7),
  /**
   * Lease of a create's Idempotency-Key claim, renewed while the create runs: after it lapses (the
   * create's process died) the next duplicate or the recovery loop takes the create over. Also the age
   * after which a task a queue dispatcher died with is submitted again.
   */
  TASKS_RECOVER_AFTER_MS: env.int(60_000, 1000, 86_400_000),
  TASKS_STOP_WAIT_MS: env.int(5000, 0, 60_000),
  TASKS_JANITOR_INTERVAL_MS: env.int(3_600_000, 10, 86_400_000),
  /** How long the event relay waits after a commit, so that the events of that time go out together. */
  TASKS_OUTBOX_LINGER_MS: env.int(50, 0, 5_000),
  TASKS_RETENTION_DAYS: env.int(90, 1, 3650),
  TASKS_SCENES_CACHE_MS: env.int(5000, 0, 3_600_000),
  /** How long a copy of the scene list may still be used while inference is unreachable. */
  TASKS_SCENES_STALE_MS: env.int(300_000, 0, 86_400_000),
  /** How long a duplicate create waits for the first one to leave `submitting` before replaying. */
  TASKS_IDEMPOTENCY_WAIT_MS: env.int(15_000, 0, 120_000),
};

export const fullShape = { ...commonShape, ...tasksShape };
export type TasksConfig = ReturnType<typeof loadTasksConfig>;

export function loadTasksConfig(e: Record<string, string | undefined> = process.env) {
  return loadConfig(fullShape, e);
}
