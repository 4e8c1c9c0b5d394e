import { z } from 'zod';
import { IMAGE_UPLOAD, commonShape, env } from '@vision/shared';

export const inferenceShape = {
  ...commonShape,
  INFERENCE_PORT: env.port(8105),
  /** Directory holding model files (yolox_nano.onnx + yolox_nano.labels.txt). */
  VISION_MODELS_DIR: env.str('./models'),
  /** Optional JSON scene catalogue replacing scenes of the built-in default (docs/MODELS.md). */
  INFERENCE_SCENES_FILE: z.string().optional(),
  INFERENCE_MAX_JOBS: env.int(4, 1, 1000),
  /**
   * Where video jobs, their owners and checkpoints are kept (docs/ARCHITECTURE.md, "Who runs a video job"): `database`
   * (schema `inference`, shared by every job-running replica: Postgres, or the embedded database standalone), so
   * that jobs move between replicas; `memory`: this process only (a replica that runs no video job, such as the
   * detection pool).
   */
  INFERENCE_JOB_STORE: z.enum(['database', 'memory']).default('database'),
  /** Where the other replicas reach this one (its jobs' stills and pictures); default: this process's own port. */
  INFERENCE_REPLICA_URL: z.string().url('expected a URL').optional(),
  /** A replica that has not renewed its lease for this long loses its jobs to the others. */
  INFERENCE_LEASE_TTL_MS: env.int(8000, 1000, 600_000),
  /** How often a replica renews its lease and writes its jobs' checkpoints. */
  INFERENCE_LEASE_BEAT_MS: env.int(2000, 100, 60_000),
  /** How often a replica with room looks for jobs to take (given to it, or left by a replica that died). */
  INFERENCE_TAKE_INTERVAL_MS: env.int(500, 50, 60_000),
  /**
   * The longest a live job's owner keeps running it while the replica it hands it to starts the stream
   * (make-before-break); within the chart's shutdown.handoverSeconds.
   */
  INFERENCE_HANDOVER_OVERLAP_MS: env.int(10_000, 0, 60_000),
  /** Whether replicas above their fair share of jobs hand the surplus to replicas below theirs (scale-out). */
  INFERENCE_REBALANCE: env.bool(true),
  /** Detect requests (images) that run at once; more wait their turn (docs/OVERLOAD.md). */
  INFERENCE_DETECT_MAX_IN_FLIGHT: env.int(12, 1, 1000),
  /** The longest a detect request waits for its turn: one expected to wait longer is refused (503 overloaded). */
  INFERENCE_DETECT_MAX_WAIT_MS: env.int(2000, 0, 600_000),
  INFERENCE_SAMPLE_FPS: env.number(5, 0.01, 60),
  INFERENCE_STREAM_GIVEUP_MS: env.int(30000, 100),
  /** First reconnect delay; doubles up to INFERENCE_RECONNECT_MAX_MS. */
  INFERENCE_RECONNECT_MIN_MS: env.int(500, 10),
  INFERENCE_RECONNECT_MAX_MS: env.int(8000, 10),
  /** A live job buffers at most this many frames; newer frames are dropped while it is full. */
  INFERENCE_LIVE_QUEUE: env.int(2, 1, 100),
  /**
   * Frames a job with zones or lines keeps for the pictures of its events (docs/EVIDENCE.md):
   * the last this many, at the detection size (about 0.7 MB each for a 16:9 stream); 0 keeps none.
   */
  INFERENCE_FRAME_RING: env.int(32, 0, 1000),
  /** How long an ended job keeps its ring, for the pictures results asks for after its last frames. */
  INFERENCE_FRAME_RING_LINGER_MS: env.int(60_000, 0, 3_600_000),
  /** A file job's frames that left the ring are decoded again from the upload: this many decoder runs at once. */
  INFERENCE_REDECODE_CONCURRENCY: env.int(1, 1, 16),
  /** The longest a picture waits for its frame decoded again (under results' RESULTS_SNAPSHOT_TIMEOUT_MS). */
  INFERENCE_REDECODE_TIMEOUT_MS: env.int(2000, 100, 60_000),
  STREAM_ALLOW_PRIVATE_NETWORKS: env.bool(false),
  INFERENCE_MAX_IMAGE_PIXELS: env.int(IMAGE_UPLOAD.maxPixels, 1),
  /**
   * onnxruntime sessions per model, each in its own worker thread, running at the same time (docs/PERFORMANCE.md,
   * "Session settings"): two keep the cores busy under concurrent load where one session's runs wait in line.
   */
  INFERENCE_MODEL_SESSIONS: env.int(2, 1, 64),
  /** Intra-op threads of each session; unset: onnxruntime's default (one per core). */
  INFERENCE_INTRA_OP_THREADS: env.optionalInt(1, 256),
  FFMPEG_PATH: env.str('ffmpeg'),
  FFPROBE_PATH: env.str('ffprobe'),
  FIRE_SMOKE_MODEL: z.string().optional(),
  FIRE_SMOKE_LABELS: z.string().optional(),
  FIRE_SMOKE_DECODER: z.enum(['yolox', 'yolov8']).default('yolov8'),
  // Unset: the bound calibrated with the model (its .json) or the built-in detector's own.
  FIRE_SMOKE_LOWER_BOUND: z.coerce
    .number({ invalid_type_error: 'expected a number' })
    .min(0, 'expected a number >= 0')
    .max(1, 'expected a number <= 1')
    .optional(),
};

export type InferenceConfig = z.infer<z.ZodObject<typeof inferenceShape>>;
