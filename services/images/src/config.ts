import { IMAGE_UPLOAD, commonShape, env, loadConfig } from '@vision/shared';
import { z } from 'zod';

/** Variables the images service reads (on top of commonShape). */
export const imagesShape = {
  IMAGES_PORT: env.port(8104),
  QUOTA_URL: z.string().url('expected a URL').default('http://127.0.0.1:8102'),
  INFERENCE_URL: z.string().url('expected a URL').default('http://127.0.0.1:8105'),
  /** Largest accepted image (SPEC.md 8: 8 MiB). */
  IMAGES_MAX_FILE_BYTES: env.int(IMAGE_UPLOAD.maxFileBytes, 1),
  /** Largest accepted request body (SPEC.md 8: 81 MiB). */
  IMAGES_MAX_BODY_BYTES: env.int(IMAGE_UPLOAD.maxBodyBytes, 1),
  /** Images per request (SPEC.md 8: 1..10). */
  IMAGES_MAX_FILES: env.int(IMAGE_UPLOAD.maxFiles, 1, 100),
  /** Decoded pixel cap per image (width x height), against decompression bombs. */
  IMAGES_MAX_PIXELS: env.int(IMAGE_UPLOAD.maxPixels, 1),
  /**
   * Inference calls in flight for one request: by default one more than the backend's two model sessions,
   * so that an image is read and decoded while the model runs on two others (docs/PERFORMANCE.md).
   */
  IMAGES_DETECT_CONCURRENCY: env.int(3, 1, 32),
  /** Image calls that run at once; more wait their turn (docs/OVERLOAD.md). */
  IMAGES_MAX_IN_FLIGHT: env.int(4, 1, 256),
  /** The longest an image call waits for its turn: one expected to wait longer is refused at once (503 overloaded). */
  IMAGES_QUEUE_MAX_WAIT_MS: env.int(1000, 0, 600_000),
  /**
   * The longest one call to inference may take, however slow its kind was measured (docs/OVERLOAD.md, "The
   * breaker around inference").
   */
  IMAGES_DETECT_TIMEOUT_MS: env.int(10_000, 100),
  /**
   * Inference answering nothing this long while a call waits opens the breaker; also the timeout of a kind
   * of call (detect, scene list) not measured yet, and the shortest timeout of a measured one.
   */
  IMAGES_BREAKER_HANG_MS: env.int(3000, 10),
  /**
   * The lowest slow threshold: a call that answers later counts as failed (the threshold is 4 x the median
   * of its kind's measured calls, at least this; the timeout is 8 x that median, at least the hang bound).
   */
  IMAGES_BREAKER_SLOW_MS: env.int(1500, 10),
  /**
   * The breaker around inference: among the last IMAGES_BREAKER_WINDOW calls, once VOLUME_THRESHOLD were
   * made, more than ERROR_PERCENT failed (or VOLUME_THRESHOLD in a row) opens it; RESET_MS later one probe.
   */
  IMAGES_BREAKER_ERROR_PERCENT: env.int(50, 1, 100),
  IMAGES_BREAKER_RESET_MS: env.int(30_000, 100),
  IMAGES_BREAKER_VOLUME_THRESHOLD: env.int(3, 0),
  IMAGES_BREAKER_WINDOW: env.int(10, 1, 10_000),
  /** How long the enabled-scene list from inference is cached. */
  IMAGES_SCENE_CACHE_MS: env.int(10_000, 0),
  /** How long a copy of the scene list may still be used while inference is unreachable. */
  IMAGES_SCENE_STALE_MS: env.int(300_000, 0),
  /** How long a quota lease outlives its window: a crashed replica's unspent units return to the day after this. */
  IMAGES_QUOTA_LEASE_GRACE_MS: env.int(10 * 60_000, 1000),
  /** Units a quota lease is asked for beyond a call's own, so that the next calls of the subject need no round trip. */
  IMAGES_QUOTA_LEASE_UNITS: env.int(32, 0, 10_000),
  /** How long calls reserve from one quota lease before a new one is taken. */
  IMAGES_QUOTA_LEASE_WINDOW_MS: env.int(10_000, 1000, 60 * 60_000),
  /** How long a quota lease no call uses is kept before its unspent units are returned. */
  IMAGES_QUOTA_LEASE_IDLE_MS: env.int(1000, 0, 60 * 60_000),
  /**
   * Period of the loop that reports the calls' spends to quota and closes ended leases. A report costs quota four
   * statements and one per call, so calls a period apart each pay the four: 250 ms folds a few one-image calls into
   * one report (bench/results/cost.md). A call waits for it only to become `completed`; its answer does not.
   */
  IMAGES_QUOTA_REPORT_MS: env.int(250, 1, 60 * 60_000),
  /** The Idempotency-Key claim of a running call: renewed while the call runs, taken over after it lapses. */
  IMAGES_CALL_CLAIM_MS: env.int(60_000, 1000),
  /** How long a duplicate request waits for the first one before answering 503 with Retry-After. */
  IMAGES_IDEMPOTENCY_WAIT_MS: env.int(120_000, 0),
  /** Retention of uploaded images and stored call results (SPEC.md 8: 90 days). */
  IMAGES_RETENTION_DAYS: env.int(90, 1),
  /** The relay of the call records' outbox (`vision.image-calls`): its period, and its wait after a commit. */
  IMAGES_OUTBOX_INTERVAL_MS: env.int(1000, 10, 60_000),
  IMAGES_OUTBOX_LINGER_MS: env.int(50, 0, 5_000),
  /** Janitor period; 0 disables the timer (tests run it by hand). */
  IMAGES_JANITOR_INTERVAL_MS: env.int(60 * 60_000, 0),
};

export const configShape = { ...commonShape, ...imagesShape };
export type ImagesConfig = z.infer<z.ZodObject<typeof configShape>>;

export function loadImagesConfig(source: Record<string, string | undefined> = process.env): ImagesConfig {
  return loadConfig(configShape, source);
}
