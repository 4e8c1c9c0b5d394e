/** What the inference backend's internal API answers (docs/INTERNAL.md, inference), as its clients read it. */
import type { ApiError } from '../contract/errors';
import type { DetectedObject } from '../contract/scenes';

export interface JobView {
  job_id: string;
  scene_code: string;
  status: 'running' | 'succeeded' | 'failed' | 'stopped';
  reason?: string;
  frames_published?: number;
}

/** A running job's latest picture (GET /internal/v1/jobs/{id}/still). */
export interface JobStill {
  jpeg: Buffer;
  width: number;
  height: number;
  frame_time_ms: number;
  captured_at_ms: number;
}

export type JobSource = { type: 'stream'; url: string } | { type: 'object'; key: string };

export type SubmitOutcome =
  | { kind: 'accepted'; job: JobView }
  | { kind: 'rejected'; reason: string }
  | { kind: 'over_capacity' }
  /** The request certainly did not reach the backend (refused connection, breaker open). */
  | { kind: 'not_delivered'; breakerOpen: boolean }
  /** The backend may have created the job (timeout, reset after sending, 5xx). */
  | { kind: 'unknown'; detail: string };

/** What inference said about one image. */
export type DetectOutcome =
  /** `image`: the decoded image's size in pixels, that the boxes are fractions of. */
  | { status: 'succeeded'; image: { width: number; height: number }; objects: DetectedObject[] }
  | { status: 'failed'; failure: 'inference_unavailable' | 'inference_rejected'; reason: string }
  /**
   * Inference had no room or no time left for the image (503 `overloaded` or `deadline_exceeded`), the
   * caller's deadline passed while it waited, or the breaker refused the call: not the image's fault.
   * `refusal` is the call-level answer to give instead (503 OP-SYS-UNAVAILABLE with the same reason and
   * inference's Retry-After, or 503 OP-TASK-BREAKER-OPEN).
   */
  | { status: 'shed'; refusal: ApiError };

/** The job slots of the job-running replicas together. */
export interface JobCapacity {
  slots: number;
  running: number;
  replicas: number;
}
