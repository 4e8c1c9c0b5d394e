/**
 * The one client of the inference backend (docs/INTERNAL.md, inference) used by tasks and images.
 * Every call goes through one breaker (inference-breaker.ts): transport failures, timeouts, 5xx answers
 * and answers slower than their kind's slow threshold count as failures; a 4xx answer is a normal
 * outcome (rejected, over capacity, unknown job, refused image) and does not. Each call's timeout comes
 * from the measured time of its kind and the caller's deadline. `isOpen()` means one thing: the breaker
 * refuses calls now (not half-open).
 */
import type CircuitBreaker from 'opossum';
import type { DetectedObject, SceneStatus } from '../contract/scenes';
import type { Identity, IdentitySigner } from '../identity/identity';
import { signJobGrant } from '../identity/job-grant';
import type { Logger } from '../telemetry/logger';
import { type CallOptions, type CallResult, type ServiceClient, UnreachableError } from '../calls';
import { REASON } from '../contract/reasons';
import type { ApiError } from '../contract/errors';
import { deadlineExceeded, overloaded } from '../admission/admission-queue';
import { retryAfterMs } from '../contract/retry-after';
import { BackendFailure, type BreakerSettings, DeadlineCut, InferenceBreaker } from './inference-breaker';

export type { BreakerSettings } from './inference-breaker';
export * from './inference-types';
import type {
  DetectOutcome,
  JobCapacity,
  JobSource,
  JobStill,
  JobView,
  SubmitOutcome,
} from './inference-types';

interface WireResult {
  seq: number;
  status: 'succeeded' | 'failed';
  image?: { width: number; height: number };
  objects?: DetectedObject[];
  reason?: string;
}

/** Whether inference named a positive integer image size. */
const isImageSize = (v: WireResult['image']): v is { width: number; height: number } =>
  typeof v === 'object' &&
  v !== null &&
  Number.isSafeInteger(v.width) &&
  Number.isSafeInteger(v.height) &&
  v.width > 0 &&
  v.height > 0;

export class InferenceClient {
  private readonly guard: InferenceBreaker;

  /**
   * `grantSigner`: tasks' key, which signs the job grant every submitted job carries (job-grant.ts); images
   * submits no jobs.
   */
  constructor(
    client: ServiceClient,
    settings: BreakerSettings,
    logger: Logger,
    private readonly grantSigner?: IdentitySigner,
  ) {
    this.guard = new InferenceBreaker(client, settings, logger, isShed);
  }

  /** Exposed for tests that open or close it by hand. */
  get breaker(): CircuitBreaker<[string, string, CallOptions], CallResult> {
    return this.guard.breaker;
  }

  /** True while the breaker refuses calls (open, not half-open). */
  isOpen(): boolean {
    return this.guard.isOpen();
  }

  state(): 'closed' | 'open' | 'half_open' {
    return this.breaker.opened ? 'open' : this.breaker.halfOpen ? 'half_open' : 'closed';
  }

  /** 503 OP-TASK-BREAKER-OPEN for `what` (new tasks, image calls), Retry-After until the probe call. */
  breakerRefusal(what: string): ApiError {
    return this.guard.refusal(what);
  }

  /** The timeout a call of `kind` (`detect`, `scenes`, `submit`...) gets now, before any deadline. */
  timeoutMs(kind: string): number {
    return this.guard.policy.timeoutMs(kind);
  }

  shutdown(): void {
    this.breaker.shutdown();
  }

  private fire(kind: string, path: string, opts: CallOptions): Promise<CallResult> {
    return this.guard.fire(kind, path, opts);
  }

  async submit(
    identity: Identity,
    job: {
      job_id: string;
      scene_code: string;
      source: JobSource;
      first_seq?: number;
      /** Keep the job's recent frames for the pictures of its events (a task with zones or lines). */
      keep_frames?: boolean;
    },
  ): Promise<SubmitOutcome> {
    let r: CallResult;
    try {
      const grant = this.grantSigner
        ? signJobGrant(this.grantSigner, {
            task_id: job.job_id,
            job_id: job.job_id,
            subject: identity.subject,
            scene_code: job.scene_code,
          })
        : undefined;
      r = await this.fire('submit', '/internal/v1/jobs', {
        identity,
        json: { ...job, ...(grant && { grant }) },
      });
    } catch (err) {
      if (isBreakerOpenError(err)) return { kind: 'not_delivered', breakerOpen: true };
      if (err instanceof UnreachableError)
        return err.maybeDelivered
          ? { kind: 'unknown', detail: err.message }
          : { kind: 'not_delivered', breakerOpen: false };
      return { kind: 'unknown', detail: err instanceof Error ? err.message : String(err) };
    }
    const body = (r.body ?? {}) as { outcome?: string; job?: JobView; reason?: string };
    if ((r.status === 201 || r.status === 200) && body.job) return { kind: 'accepted', job: body.job };
    if (r.status === 422) return { kind: 'rejected', reason: String(body.reason ?? 'rejected') };
    if (r.status === 429) return { kind: 'over_capacity' };
    return { kind: 'unknown', detail: `unexpected answer ${r.status}` };
  }

  /** The job, `null` when the backend does not know it; throws when the backend cannot be asked. */
  async getJob(identity: Identity, jobId: string): Promise<JobView | null> {
    const r = await this.fire('job', `/internal/v1/jobs/${encodeURIComponent(jobId)}`, { identity });
    if (r.status === 404) return null;
    if (r.status === 200) return (r.body as { job: JobView }).job;
    throw new Error(`inference answered ${r.status} for job ${jobId}`);
  }

  async getJobs(identity: Identity, ids: string[]): Promise<Map<string, JobView>> {
    const r = await this.fire('jobs', `/internal/v1/jobs?ids=${ids.map(encodeURIComponent).join(',')}`, {
      identity,
    });
    if (r.status !== 200) throw new Error(`inference answered ${r.status} for a job query`);
    const jobs = (r.body as { jobs?: JobView[] }).jobs ?? [];
    return new Map(jobs.map((j) => [j.job_id, j]));
  }

  /** Stops a job; the job as the backend reports it afterwards, `null` when unknown. */
  async stopJob(identity: Identity, jobId: string): Promise<JobView | null> {
    const r = await this.fire('stop', `/internal/v1/jobs/${encodeURIComponent(jobId)}/stop`, {
      identity,
      method: 'POST',
    });
    if (r.status === 404) return null;
    if (r.status === 200) return (r.body as { job: JobView }).job;
    throw new Error(`inference answered ${r.status} for stop of ${jobId}`);
  }

  /** A running job's latest picture; `null` when the backend has none (unknown or ended job, no frame yet). */
  async still(identity: Identity, jobId: string): Promise<JobStill | null> {
    const r = await this.fire('still', `/internal/v1/jobs/${encodeURIComponent(jobId)}/still`, { identity });
    if (r.status === 404) return null;
    const b = r.body as Partial<Omit<JobStill, 'jpeg'> & { jpeg_base64: string }> | undefined;
    if (r.status !== 200 || typeof b?.jpeg_base64 !== 'string')
      throw new Error(`inference answered ${r.status} for the picture of job ${jobId}`);
    return {
      jpeg: Buffer.from(b.jpeg_base64, 'base64'),
      width: Number(b.width),
      height: Number(b.height),
      frame_time_ms: Number(b.frame_time_ms),
      captured_at_ms: Number(b.captured_at_ms),
    };
  }

  /**
   * The job slots of every live job-running replica (GET /internal/v1/capacity); `null` from a backend that does not
   * report them. Throws when the backend cannot be asked.
   */
  async capacity(identity: Identity): Promise<JobCapacity | null> {
    const r = await this.fire('jobs', '/internal/v1/capacity', { identity });
    if (r.status === 404) return null;
    const b = r.body as Partial<JobCapacity> | undefined;
    if (r.status !== 200 || !Number.isSafeInteger(b?.slots))
      throw new Error(`inference answered ${r.status} for its capacity`);
    return { slots: Number(b?.slots), running: Number(b?.running ?? 0), replicas: Number(b?.replicas ?? 1) };
  }

  async scenes(identity: Identity): Promise<SceneStatus[]> {
    const r = await this.fire('scenes', '/internal/v1/scenes', { identity });
    if (r.status !== 200) throw new Error(`inference answered ${r.status} for scenes`);
    return (r.body as { scenes: SceneStatus[] }).scenes;
  }

  /**
   * Detects one image: its bytes are the request body (no multipart framing to build here and parse
   * there), the scene is in the query string.
   */
  async detect(
    identity: Identity,
    sceneCode: string,
    data: Buffer,
    contentType: string,
    deadline?: number,
  ): Promise<DetectOutcome> {
    let r: CallResult;
    try {
      r = await this.fire('detect', `/internal/v1/detect?scene_code=${encodeURIComponent(sceneCode)}`, {
        identity,
        body: data,
        headers: { 'content-type': contentType },
        ...(deadline !== undefined ? { deadline } : {}),
      });
    } catch (err) {
      // Neither is the image's failure: the whole call is refused (nothing charged, its key free again).
      if (err instanceof DeadlineCut)
        return { status: 'shed', refusal: deadlineExceeded('the image detection') };
      if (isBreakerOpenError(err)) return { status: 'shed', refusal: this.breakerRefusal('image calls') };
      return { status: 'failed', failure: 'inference_unavailable', reason: errorReason(err) };
    }
    if (isShed(r)) return { status: 'shed', refusal: shedRefusal(r) };
    if (r.status !== 200)
      return { status: 'failed', failure: 'inference_rejected', reason: `refused_${r.status}` };
    const results = (r.body as { results?: WireResult[] } | undefined)?.results;
    const first = Array.isArray(results) ? results.find((x) => x.seq === 0) : undefined;
    if (!first)
      return { status: 'failed', failure: 'inference_unavailable', reason: 'no result for the image' };
    if (first.status === 'succeeded' && Array.isArray(first.objects) && isImageSize(first.image))
      return {
        status: 'succeeded',
        image: { width: first.image.width, height: first.image.height },
        objects: first.objects,
      };
    if (first.status === 'succeeded')
      return { status: 'failed', failure: 'inference_unavailable', reason: 'malformed result' };
    const reason = first.reason ?? 'failed';
    // Inference names decode problems (the image's fault); "detection failed" is its own fault.
    return {
      status: 'failed',
      failure: reason === 'detection failed' ? 'inference_unavailable' : 'inference_rejected',
      reason,
    };
  }
}

/** An answer refusing work for want of room or time (admission/admission-queue.ts). */
function isShed(r: CallResult): boolean {
  const reason = (r.body as { error?: { details?: { reason?: unknown } } } | undefined)?.error?.details
    ?.reason;
  return r.status === 503 && (reason === REASON.overloaded || reason === REASON.deadline_exceeded);
}

/** The call-level refusal for a shed answer, keeping inference's reason and Retry-After. */
function shedRefusal(r: CallResult): ApiError {
  const reason = (r.body as { error?: { details?: { reason?: unknown } } } | undefined)?.error?.details
    ?.reason;
  if (reason === REASON.deadline_exceeded) return deadlineExceeded('the image detection');
  return overloaded(retryAfterMs(r.headers['retry-after'], Date.now()) ?? 0, 'image detection');
}

function isBreakerOpenError(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === 'EOPENBREAKER';
}

function errorReason(err: unknown): string {
  if (err instanceof UnreachableError) return err.timedOut ? 'timeout' : 'unreachable';
  if (err instanceof BackendFailure) return err.message;
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'EOPENBREAKER') return 'breaker_open';
  if (code === 'ETIMEDOUT') return 'timeout';
  return 'error';
}
