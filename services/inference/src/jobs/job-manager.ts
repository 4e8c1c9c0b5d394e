import { z } from 'zod';
import {
  isSceneCode,
  MAX_JOB_GRANT_LENGTH,
  SCENE_CODES,
  taskReason,
  type Bus,
  type Logger,
  type ObjectStore,
} from '@vision/shared';
import type { SceneCatalogue } from '../catalogue/catalogue';
import { checkStreamHost, parseStreamUrl, type Resolver } from '../net/stream-url';
import type { DecoderCheck } from './decoder-preflight';
import { Job } from './job';
import type { Still } from './latest-still';
import { renderPicture, type Drawing, type Picture } from './frame-picture';
import type { RingFrame } from './frame-ring';
import { FrameRedecoder } from './frame-redecode';
import type { InputKind, JobSpec, JobView, ResolvedInput } from './job-types';

/** Frame seqs are Postgres `integer`s in results: a first seq leaves room for 2^28 frames below 2^31. */
const MAX_FIRST_SEQ = 2 ** 31 - 2 ** 28;

export const jobRequestSchema = z
  .object({
    job_id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'expected 1-128 characters of [A-Za-z0-9._:-]'),
    scene_code: z.string().min(1).max(64),
    source: z.union([
      z.object({ type: z.literal('stream'), url: z.string().min(1).max(2048) }).strict(),
      z.object({ type: z.literal('object'), key: z.string().min(1).max(1024) }).strict(),
    ]),
    sample_fps: z.number().positive().max(30).optional(),
    /** The seq of the job's first frame: a job started again after its backend lost it (docs/INTERNAL.md). */
    first_seq: z.number().int().min(0).max(MAX_FIRST_SEQ).optional(),
    /** Tasks' signed grant for this job (job-grant.ts), copied onto every message the job publishes. */
    grant: z.string().min(1).max(MAX_JOB_GRANT_LENGTH).optional(),
    /** Keep the job's recent frames from its first on (a task with zones or lines: the pictures of events). */
    keep_frames: z.boolean().optional(),
  })
  .strict();
export type JobRequest = z.infer<typeof jobRequestSchema>;

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
export class JobManager {
  private readonly jobs = new Map<string, Job>();
  private readonly submitting = new Map<string, Promise<SubmitOutcome>>();
  private closed = false;
  private readonly redecoder: FrameRedecoder;

  constructor(private readonly o: JobManagerOptions) {
    this.redecoder = new FrameRedecoder({
      ffmpegPath: o.ffmpegPath,
      logger: o.logger,
      concurrency: o.redecodeConcurrency ?? 1,
      timeoutMs: o.redecodeTimeoutMs ?? 2000,
    });
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
    const inFlight = this.submitting.get(req.job_id);
    if (inFlight) {
      const first = await inFlight;
      return first.outcome === 'accepted' ? { outcome: 'duplicate', job: first.job } : first;
    }
    if (this.closed) return { outcome: 'over_capacity' };
    if (this.runningCount + this.submitting.size >= this.o.maxJobs) return { outcome: 'over_capacity' };
    const p = this.admit(req);
    this.submitting.set(req.job_id, p);
    try {
      return await p;
    } finally {
      this.submitting.delete(req.job_id);
    }
  }

  private async admit(req: JobRequest): Promise<SubmitOutcome> {
    if (this.o.decoder && !this.o.decoder.ok)
      return { outcome: 'rejected', reason: taskReason('decoder_unavailable') };
    if (!isSceneCode(req.scene_code))
      return { outcome: 'rejected', reason: `unknown scene_code (one of ${SCENE_CODES.join(', ')})` };
    const engine = this.o.catalogue.engine(req.scene_code);
    if (!engine) {
      const st = this.o.catalogue.status(req.scene_code);
      return {
        outcome: 'rejected',
        reason: `scene ${req.scene_code} is disabled${st?.reason ? `: ${st.reason}` : ''}`,
      };
    }
    const resolved = await this.resolveSource(req.source);
    if (!resolved.ok) return { outcome: 'rejected', reason: resolved.reason };
    const spec: JobSpec = {
      jobId: req.job_id,
      sceneCode: req.scene_code,
      source: req.source,
      sampleFps: req.sample_fps ?? this.o.defaultSampleFps,
      firstSeq: req.first_seq ?? 0,
      ...(req.grant && { grant: req.grant }),
    };
    const job = new Job(spec, resolved.input, {
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
    });
    if (req.keep_frames) job.ring.arm();
    this.jobs.set(spec.jobId, job);
    this.forgetOldEnded();
    job.start();
    job.finished.catch((err: unknown) => this.o.logger.error({ err, job_id: spec.jobId }, 'job crashed'));
    return { outcome: 'accepted', job: job.snapshot() };
  }

  private async resolveSource(
    source: JobRequest['source'],
  ): Promise<{ ok: true; input: ResolvedInput } | { ok: false; reason: string }> {
    if (source.type === 'object') {
      let info;
      try {
        info = await this.o.objectStore.stat(source.key);
      } catch {
        return { ok: false, reason: 'object key is not valid or the store is unreachable' };
      }
      if (!info) return { ok: false, reason: 'object not found' };
      const loc = await this.o.objectStore.locate(source.key);
      const kind: InputKind = loc.startsWith('https://')
        ? 'https'
        : loc.startsWith('http://')
          ? 'http'
          : 'file';
      return { ok: true, input: { kind, input: loc, live: false } };
    }
    const parsed = parseStreamUrl(source.url);
    if (!parsed.ok) return parsed;
    const host = parsed.url.hostname;
    const check = await checkStreamHost(host, {
      allowPrivate: this.o.allowPrivateNetworks,
      resolve: this.o.resolve,
    });
    if (!check.ok) return check;
    return { ok: true, input: { kind: parsed.scheme, input: source.url, live: true, host } };
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
    const frame = job?.ring.get(seq) ?? (job && (await this.redecoded(job, seq)));
    if (!frame) return { ok: false };
    return { ok: true, seq, timeMs: frame.timeMs, ...(await renderPicture(frame, drawing)) };
  }

  /** A frame of a file job decoded again from its upload; undefined for a live job, or when it cannot be had. */
  private async redecoded(job: Job, seq: number): Promise<RingFrame | undefined> {
    const { source } = job.spec;
    const first = job.firstFrame;
    // Any seq from the first on: a job started again after a restart of this instance may not have reached it yet.
    if (source.type !== 'object' || job.input.live || !first || seq < first.seq) return undefined;
    const locate = async () => {
      const r = await this.resolveSource(source);
      return r.ok ? r.input : undefined;
    };
    const { sampleFps } = job.spec;
    return this.redecoder.frame(job.spec.jobId, { locate, sampleFps, size: job.ring.size, first }, seq);
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
    if (!job) return undefined;
    await job.finished.catch(() => undefined);
    return job.snapshot();
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
    const all = [...this.jobs.values()];
    for (const j of all) j.abort(taskReason('backend_shutdown'));
    await Promise.all(all.map((j) => j.finished.catch(() => undefined)));
  }
}
