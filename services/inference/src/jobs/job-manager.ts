import { taskReason, type Bus, type Logger, type ObjectStore } from '@vision/shared';
import type { SceneCatalogue } from '../catalogue/catalogue';
import type { Resolver } from '../net/stream-url';
import type { JobCheckpoint, JobEnd, JobRecord, LocalJobs } from '../ownership/port';
import type { DecoderCheck } from './decoder-preflight';
import { Job } from './job';
import { parseStreamInput, prepareJob, resolveSource, runSpec, specOf, type Prepared } from './job-admission';
import type { Still } from './latest-still';
import { renderPicture, type Drawing, type Picture } from './frame-picture';
import { FrameRedecoder } from './frame-redecode';
import type { JobRuntimeOptions, JobSource, JobSpec, JobView, ResolvedInput } from './job-types';
import type { JobRequest } from './job-request';
import { WarmStarts } from './warm-start';
import { Submissions } from './submissions';

export { jobRequestSchema, type JobRequest } from './job-request';

export type SubmitOutcome =
  | { outcome: 'accepted'; job: JobView }
  | { outcome: 'duplicate'; job: JobView }
  | { outcome: 'rejected'; reason: string }
  | { outcome: 'over_capacity' };

export interface JobManagerOptions {
  bus: Bus;
  catalogue: SceneCatalogue;
  objectStore: ObjectStore;
  logger: Logger;
  maxJobs: number;
  defaultSampleFps: number;
  ffmpegPath: string;
  giveupMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  liveQueue: number;
  allowPrivateNetworks: boolean;
  resolve?: Resolver;
  /** Egress proxy for the HTTP(S) connections of caller-given streams (startEgressProxy). */
  httpProxy?: string;
  /** The decoder preflight (checkDecoder): while it failed, every job is refused (and its task refunded). */
  decoder?: DecoderCheck;
  /** Ended jobs remembered for queries; the oldest are forgotten beyond this. */
  keepEnded?: number;
  /** Each armed job's ring of recent frames (frames), kept this long after the job ends. */
  ringFrames?: number;
  ringLingerMs?: number;
  /** A file job's frames that left the ring, decoded again from the upload (frame-redecode.ts): runs at once. */
  redecodeConcurrency?: number;
  /** The longest a picture waits for its frame decoded again. */
  redecodeTimeoutMs?: number;
}

/** The picture of an event, or why there is none (the frame left the ring, or the job is not known here). */
export type PictureOutcome = ({ ok: true; seq: number; timeMs: number } & Picture) | { ok: false };

/**
 * Jobs of this instance, in memory: a restarted backend forgets them, and GET answers 404 for a job
 * it does not know (the tasks reconciler treats that as "the job is gone": see docs/INTERNAL.md).
 */
export class JobManager implements LocalJobs {
  private readonly jobs = new Map<string, Job>();
  private readonly submitting = new Submissions();
  private closed = false;
  private readonly redecoder: FrameRedecoder;
  /** Live streams started for jobs offered here, before this replica takes them (ownership/). */
  private readonly warmStarts = new WarmStarts();

  constructor(private readonly o: JobManagerOptions) {
    this.redecoder = new FrameRedecoder({
      ffmpegPath: o.ffmpegPath,
      logger: o.logger,
      concurrency: o.redecodeConcurrency ?? 1,
      timeoutMs: o.redecodeTimeoutMs ?? 2000,
    });
  }

  /** Jobs this replica runs at once (INFERENCE_MAX_JOBS). */
  get maxJobs(): number {
    return this.o.maxJobs;
  }

  get runningCount(): number {
    let n = 0;
    for (const j of this.jobs.values()) if (j.running) n++;
    return n;
  }

  /** Whether video jobs can run here, for the scene list (tasks answers 503 before charging when not). */
  videoStatus(): { video_enabled: boolean; video_reason?: string } {
    const d = this.o.decoder;
    if (!d || d.ok) return { video_enabled: true };
    return { video_enabled: false, video_reason: `video decoding unavailable: ${d.reason}` };
  }

  async submit(req: JobRequest): Promise<SubmitOutcome> {
    const existing = this.jobs.get(req.job_id);
    if (existing) return { outcome: 'duplicate', job: existing.snapshot() };
    const joined = this.submitting.joined(req.job_id);
    if (joined) return joined;
    if (this.closed) return { outcome: 'over_capacity' };
    if (this.runningCount + this.submitting.size >= this.o.maxJobs) return { outcome: 'over_capacity' };
    return this.submitting.run(req.job_id, () => this.admit(req));
  }

  private async admit(req: JobRequest): Promise<SubmitOutcome> {
    const prepared = await this.prepare(req);
    if (!prepared.ok) return { outcome: 'rejected', reason: prepared.reason };
    const spec = specOf(req, this.o.defaultSampleFps, 0);
    const job = this.startJob(spec, prepared.input, req.keep_frames === true);
    return { outcome: 'accepted', job: job.snapshot() };
  }

  /** Checks a submission before it is placed: the decoder works, the scene serves, the source resolves. */
  prepare(req: JobRequest): Promise<Prepared> {
    return prepareJob(req, this.o);
  }

  private runtime(spec: JobSpec): JobRuntimeOptions {
    const engine = this.o.catalogue.engine(spec.sceneCode);
    if (!engine) throw new Error(`scene ${spec.sceneCode} has no engine`);
    return {
      bus: this.o.bus,
      engine,
      logger: this.o.logger,
      ffmpegPath: this.o.ffmpegPath,
      giveupMs: this.o.giveupMs,
      reconnectMinMs: this.o.reconnectMinMs,
      reconnectMaxMs: this.o.reconnectMaxMs,
      liveQueue: this.o.liveQueue,
      allowPrivate: this.o.allowPrivateNetworks,
      resolve: this.o.resolve,
      httpProxy: this.o.httpProxy,
      ringFrames: this.o.ringFrames,
      ringLingerMs: this.o.ringLingerMs,
    };
  }

  private startJob(spec: JobSpec, input: ResolvedInput, keepFrames: boolean): Job {
    const warm = this.warmStarts.take(spec.jobId);
    const job = new Job(spec, input, this.runtime(spec), warm);
    if (keepFrames) job.ring.arm();
    // A run of the same job still here is stale (the store gave the job out again): it publishes nothing more.
    const stale = this.jobs.get(spec.jobId);
    if (stale?.running && !stale.left) stale.fence(); // logged as it leaves: `how` fenced
    this.jobs.set(spec.jobId, job);
    this.forgetOldEnded();
    job.start();
    void job.finished
      .catch((err: unknown) => this.o.logger.error({ err, job_id: spec.jobId }, 'job crashed'))
      .finally(() => warm?.close()); // a warm stream the run did not go on with (it connected afresh)
    return job;
  }

  /**
   * Runs a job this replica took from the lease store (ownership/), from its checkpoint when an earlier owner left
   * one. `onEnd` follows its end (not its leaving: a job handed over or fenced ends elsewhere).
   */
  async run(record: JobRecord, onEnd: (end: JobEnd) => void): Promise<void> {
    const req = record.request;
    const resume = record.checkpoint;
    const spec = runSpec(record, this.o.defaultSampleFps);
    // A live source's host is checked again before each connection (live-connect.ts), not here: a name server
    // that fails for a moment at a handover does not end the task.
    const prepared =
      req.source.type === 'stream'
        ? parseStreamInput(req.source.url)
        : await resolveSource(this.o, req.source);
    if (!prepared.ok) {
      this.warmStarts.close(req.job_id);
      const checkpoint = resume ?? { nextSeq: spec.firstSeq, published: 0, dropped: 0, reconnects: 0 };
      onEnd({ jobId: req.job_id, status: 'failed', reason: prepared.reason, checkpoint });
      return;
    }
    const job = this.startJob(spec, prepared.input, req.keep_frames === true);
    if (record.stopRequested) job.stop();
    void job.finished.then(() => {
      if (job.left) return;
      const { status, reason } = job.snapshot();
      const checkpoint = job.checkpoint();
      onEnd({
        jobId: req.job_id,
        status: status === 'running' ? 'failed' : status,
        ...(reason && { reason }),
        checkpoint,
      });
    });
  }

  runningIds(): string[] {
    return [...this.jobs.entries()].filter(([, j]) => j.running && !j.left).map(([id]) => id);
  }

  async warm(record: JobRecord): Promise<boolean> {
    const req = record.request;
    const parsed = req.source.type === 'stream' ? parseStreamInput(req.source.url) : undefined;
    if (!parsed?.ok || this.closed) return false;
    const spec = runSpec(record, this.o.defaultSampleFps);
    return this.warmStarts.start(spec.jobId, () => this.runtime(spec), parsed.input, spec.sampleFps);
  }

  unwarm(id: string): void {
    this.warmStarts.close(id);
  }

  isLive(id: string): boolean {
    return this.jobs.get(id)?.input.live === true;
  }

  checkpoint(id: string): JobCheckpoint | undefined {
    const job = this.jobs.get(id);
    return job?.running ? job.checkpoint() : undefined;
  }

  /** Hands a running job over (ownership/): resolves with where the next owner goes on; the job is forgotten here. */
  async handOver(id: string): Promise<JobCheckpoint | undefined> {
    const job = this.jobs.get(id);
    if (!job?.running) return undefined;
    const checkpoint = await job.handOver();
    this.jobs.delete(id);
    return checkpoint;
  }

  /** The job's ownership was lost: it stops publishing at once, and is forgotten here. */
  fence(id: string): void {
    this.jobs.get(id)?.fence();
    this.jobs.delete(id);
  }

  get(id: string): JobView | undefined {
    return this.jobs.get(id)?.snapshot();
  }

  /** A running job's latest picture; undefined for an unknown or ended job, or before its first frame. */
  still(id: string): Promise<Still> | undefined {
    const job = this.jobs.get(id);
    return job?.running ? job.detector.still() : undefined;
  }

  /** Starts a job's ring of recent frames (results, for a task with zones or lines); false: no such job. */
  arm(id: string): boolean {
    const job = this.jobs.get(id);
    if (job?.running) job.ring.arm();
    return job !== undefined;
  }

  /**
   * The frame `seq` of a job with `drawing` drawn: from the job's ring, or for a file job whose frame left it,
   * decoded again from the upload (frame-redecode.ts). Asking arms the ring.
   */
  async picture(id: string, seq: number, drawing: Drawing): Promise<PictureOutcome> {
    const job = this.jobs.get(id);
    if (job?.running) job.ring.arm();
    const locate = async (source: JobSource) => {
      const r = await resolveSource(this.o, source);
      return r.ok ? r.input : undefined;
    };
    const frame = job?.ring.get(seq) ?? (job && (await this.redecoder.jobFrame(job, seq, locate)));
    if (!frame) return { ok: false };
    return { ok: true, seq, timeMs: frame.timeMs, ...(await renderPicture(frame, drawing)) };
  }

  list(ids: string[]): JobView[] {
    return ids.map((id) => this.jobs.get(id)?.snapshot()).filter((j): j is JobView => j !== undefined);
  }

  stop(id: string): JobView | undefined {
    const job = this.jobs.get(id);
    if (!job) return undefined;
    job.stop();
    return job.snapshot();
  }

  /** Waits for a job to end (tests). */
  async waitFor(id: string): Promise<JobView | undefined> {
    const job = this.jobs.get(id);
    await job?.finished.catch(() => undefined);
    return job?.snapshot();
  }

  private forgetOldEnded(): void {
    const keep = this.o.keepEnded ?? 10_000;
    const ended = [...this.jobs.entries()].filter(([, j]) => !j.running);
    for (let i = 0; i < ended.length - keep; i++) this.jobs.delete(ended[i][0]);
  }

  /** Ends every running job (failed: backend shut down) and waits for their end messages. */
  async close(): Promise<void> {
    this.closed = true;
    this.redecoder.close();
    this.warmStarts.closeAll();
    const all = [...this.jobs.values()];
    for (const j of all) j.abort(taskReason('backend_shutdown'));
    await Promise.all(all.map((j) => j.finished.catch(() => undefined)));
  }
}
