/**
 * Results' client of inference (docs/INTERNAL.md, inference): the pictures of events, from a job's ring of recent
 * frames. Its calls go through a breaker of their own (inference-breaker.ts): a backend that is down or slow makes
 * pictures fail at once, and nothing waits on it.
 */
import type { Identity } from '../identity/identity';
import type { Logger } from '../telemetry/logger';
import type { ServiceClient } from '../calls/service-client';
import { type BreakerSettings, InferenceBreaker } from './inference-breaker';

/** The picture of an event (POST /internal/v1/jobs/{id}/pictures): the frame with its drawing, and the crop. */
export interface FramePicture {
  jpeg: Buffer;
  crop: Buffer;
  seq: number;
  frame_time_ms: number;
}

/** What to draw on a picture, in normalized coordinates: a box [x1, y1, x2, y2], or a polygon. */
export type PictureDrawing = { box: [number, number, number, number] } | { polygon: [number, number][] };

export class InferencePictures {
  private readonly guard: InferenceBreaker;

  constructor(client: ServiceClient, settings: BreakerSettings, logger: Logger) {
    this.guard = new InferenceBreaker(client, settings, logger, () => false);
  }

  shutdown(): void {
    this.guard.breaker.shutdown();
  }

  /** Starts keeping a running job's recent frames (a task given rules after it started); false: unknown job. */
  async armRing(identity: Identity, jobId: string): Promise<boolean> {
    const r = await this.guard.fire('ring', `/internal/v1/jobs/${encodeURIComponent(jobId)}/ring`, {
      identity,
      method: 'POST',
    });
    if (r.status === 404) return false;
    if (r.status === 204) return true;
    throw new Error(`inference answered ${r.status} for the ring of job ${jobId}`);
  }

  /** Frame `seq` of a job with `drawing` drawn; `null` once the frame left the job's ring (or the job is gone). */
  async picture(
    identity: Identity,
    jobId: string,
    seq: number,
    drawing: PictureDrawing,
  ): Promise<FramePicture | null> {
    const r = await this.guard.fire('picture', `/internal/v1/jobs/${encodeURIComponent(jobId)}/pictures`, {
      identity,
      json: { seq, ...drawing },
    });
    if (r.status === 404) return null;
    const b = r.body as
      Partial<{ jpeg_base64: string; crop_base64: string; frame_time_ms: number }> | undefined;
    if (r.status !== 200 || typeof b?.jpeg_base64 !== 'string' || typeof b.crop_base64 !== 'string')
      throw new Error(`inference answered ${r.status} for a picture of job ${jobId}`);
    return {
      jpeg: Buffer.from(b.jpeg_base64, 'base64'),
      crop: Buffer.from(b.crop_base64, 'base64'),
      seq,
      frame_time_ms: Number(b.frame_time_ms),
    };
  }
}
