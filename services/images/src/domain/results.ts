import type { BBox, ErrorCode, ImageZoneCounts } from '@vision/shared';

/** A detection as image detection returns it: never a track_id (SPEC.md 2.3). */
export interface ImageObject {
  label: string;
  score: number;
  bbox: BBox;
}

export type ImageResult =
  | { seq: number; status: 'succeeded'; objects: ImageObject[]; zones?: ImageZoneCounts[] }
  | { seq: number; status: 'failed'; error_code: ErrorCode };

/** Why one image failed, as the service saw it. */
export type ImageFailure =
  /** The image could not be written to object storage. */
  | 'relay_failed'
  /** Inference could not be reached, timed out, answered an error, or the breaker opened mid-call. */
  | 'inference_unavailable'
  /** Inference reached the image and reported it could not be processed (for example undecodable). */
  | 'inference_rejected';

/**
 * Error code of a failed image (docs/API.md, "Image detection"): a relay failure is a dependency that
 * is not available (OP-SYS-UNAVAILABLE), an inference backend that is down is OP-TASK-UPSTREAM-DOWN,
 * and an image inference could not decode is OP-TASK-REQUEST-INVALID.
 */
export function errorCodeFor(failure: ImageFailure): ErrorCode {
  switch (failure) {
    case 'relay_failed':
      return 'OP-SYS-UNAVAILABLE';
    case 'inference_unavailable':
      return 'OP-TASK-UPSTREAM-DOWN';
    case 'inference_rejected':
      return 'OP-TASK-REQUEST-INVALID';
  }
}

/** Keeps only the public fields of an object and drops anything else (track_id included). */
export function toImageObject(o: { label: string; score: number; bbox: BBox }): ImageObject {
  const { format, cx, cy, width, height } = o.bbox;
  return { label: o.label, score: o.score, bbox: { format, cx, cy, width, height } };
}

/** Units to settle the quota hold to: only succeeded images are charged (SPEC.md 1, 8). */
export function chargeableUnits(results: readonly ImageResult[]): number {
  return results.filter((r) => r.status === 'succeeded').length;
}

/**
 * The results once quota refused to record the succeeded images (a hold that expired on a day that
 * filled up meanwhile, docs/INTERNAL.md): those images are not granted, so they fail with
 * OP-QUOTA-DAILY-EXHAUSTED and cost nothing.
 */
export function withUngrantedImagesFailed(results: readonly ImageResult[]): ImageResult[] {
  return results.map((r) =>
    r.status === 'succeeded' ? { seq: r.seq, status: 'failed', error_code: 'OP-QUOTA-DAILY-EXHAUSTED' } : r,
  );
}

export interface ResultsSummary {
  images: number;
  succeeded: number;
  failed: number;
}

export function summarise(results: readonly ImageResult[]): ResultsSummary {
  const succeeded = chargeableUnits(results);
  return { images: results.length, succeeded, failed: results.length - succeeded };
}

/** Results sorted into upload order, checked to cover every seq 0..n-1 exactly once. */
export function inUploadOrder(results: readonly ImageResult[], count: number): ImageResult[] {
  const sorted = [...results].sort((a, b) => a.seq - b.seq);
  if (sorted.length !== count || sorted.some((r, i) => r.seq !== i))
    throw new Error(`results do not cover seq 0..${count - 1}`);
  return sorted;
}

export interface DetectionResponse {
  task_id: string;
  request_id: string;
  status: 'succeeded';
  results: ImageResult[];
  replayed?: true;
}

export function detectionResponse(
  taskId: string,
  requestId: string,
  results: ImageResult[],
  replayed: boolean,
): DetectionResponse {
  const body: DetectionResponse = { task_id: taskId, request_id: requestId, status: 'succeeded', results };
  if (replayed) body.replayed = true;
  return body;
}
