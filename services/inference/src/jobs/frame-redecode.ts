/**
 * A file job's frames decoded again from its stored upload, for the pictures of events whose frame has left the
 * ring (docs/EVIDENCE.md). The job's own decoder arguments (ffmpeg-args.ts) with a seek before the
 * input (redecode-plan.ts): the frame of a seq comes out as the job's decode gave it. Asks for one job that arrive
 * together are decoded by one ffmpeg run per span of frames; `concurrency` runs at once over all jobs, each in the
 * decoder's sandbox, each killed at its deadline; an ask not answered within `timeoutMs` gets no frame.
 */
import type { Logger } from '@vision/shared';
import { jobDecoder } from './ffmpeg-args';
import { FfmpegFrameSource } from './frame-source';
import { frameContent, type RingFrame } from './frame-ring';
import type { Job } from './job';
import type { JobSource, ResolvedInput } from './job-types';
import { redecodeRuns, slotAt, slotOfSeq, type FirstFrame, type RedecodeRun } from './redecode-plan';

/** What a job's frames are decoded again from. */
export interface RedecodeSource {
  /** The upload's current location (an address may have expired since the job began); undefined: it is gone. */
  locate(): Promise<ResolvedInput | undefined>;
  sampleFps: number;
  /** The letterbox side the job decoded at. */
  size: number;
  first: FirstFrame;
}

export interface RedecoderOptions {
  ffmpegPath: string;
  logger: Logger;
  /** Decoder runs at once, over every job. */
  concurrency: number;
  /** An ask's time limit, from its arrival (its run is killed by then). */
  timeoutMs: number;
  /** How far before a frame its decoder starts (redecode-plan.ts). */
  marginMs?: number;
  /** Frames a run may span. */
  maxSpan?: number;
}

interface Ask {
  seq: number;
  slot: number;
  settle(f: RingFrame | undefined): void;
}

interface Queued {
  jobId: string;
  source: RedecodeSource;
  run: RedecodeRun;
  asks: Ask[];
  deadline: number;
}

/** Asks for one job gathered this long before their runs are planned. */
const GATHER_MS = 10;
/** Runs waiting for a turn; an ask beyond them gets no frame at once. */
const MAX_QUEUED = 64;

export class FrameRedecoder {
  /**
   * A frame of a file job decoded again from its upload (`locate` resolves it); undefined for a live job, or when it
   * cannot be had. Any seq from the job's first frame on: a job started again after a restart of this instance may
   * not have reached it yet.
   */
  async jobFrame(
    job: Job,
    seq: number,
    locate: (source: JobSource) => Promise<ResolvedInput | undefined>,
  ): Promise<RingFrame | undefined> {
    const { source, sampleFps, jobId } = job.spec;
    const first = job.firstFrame;
    if (source.type !== 'object' || job.input.live || !first || seq < first.seq) return undefined;
    return this.frame(jobId, { locate: () => locate(source), sampleFps, size: job.ring.size, first }, seq);
  }

  private active = 0;
  private readonly queue: Queued[] = [];
  private readonly gathering = new Map<string, { source: RedecodeSource; asks: Ask[] }>();
  private readonly running = new Set<FfmpegFrameSource>();
  private closed = false;

  constructor(private readonly o: RedecoderOptions) {}

  /** The frame `seq` of job `jobId` decoded again; undefined when it cannot be had within the time limit. */
  frame(jobId: string, source: RedecodeSource, seq: number): Promise<RingFrame | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      let done = false;
      const timer = setTimeout(() => settle(undefined), this.o.timeoutMs);
      timer.unref();
      const settle = (f: RingFrame | undefined) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(f);
      };
      const ask: Ask = { seq, slot: slotOfSeq(seq, source.first, source.sampleFps), settle };
      const g = this.gathering.get(jobId);
      if (g) return void g.asks.push(ask);
      this.gathering.set(jobId, { source, asks: [ask] });
      setTimeout(() => this.plan(jobId), GATHER_MS).unref();
    });
  }

  private plan(jobId: string): void {
    const g = this.gathering.get(jobId);
    this.gathering.delete(jobId);
    if (!g) return;
    const { source, asks } = g;
    const runs = redecodeRuns(
      asks.map((a) => a.slot),
      source.sampleFps,
      this.o.marginMs ?? 1000,
      this.o.maxSpan ?? 64,
    );
    const deadline = Date.now() + this.o.timeoutMs;
    for (const run of runs) {
      const mine = asks.filter((a) => run.slots.includes(a.slot));
      if (this.queue.length >= MAX_QUEUED) mine.forEach((a) => a.settle(undefined));
      else this.queue.push({ jobId, source, run, asks: mine, deadline });
    }
    this.pump();
  }

  private pump(): void {
    while (this.active < this.o.concurrency && this.queue.length > 0) {
      const q = this.queue.shift()!;
      if (Date.now() >= q.deadline) continue; // its asks have had their answer (none)
      this.active++;
      this.decode(q)
        .catch((err: unknown) => this.o.logger.warn({ err, job_id: q.jobId }, 'frames not decoded again'))
        .finally(() => {
          q.asks.forEach((a) => a.settle(undefined));
          this.active--;
          this.pump();
        });
    }
  }

  private async decode({ jobId, source, run, asks, deadline }: Queued): Promise<void> {
    const input = await untilDeadline(source.locate(), deadline);
    if (!input || input.live || this.closed) return;
    const fps = source.sampleFps;
    const last = run.slots[run.slots.length - 1];
    const ffmpeg = new FfmpegFrameSource({
      ffmpegPath: this.o.ffmpegPath,
      read: input.kind === 'file' ? [input.input] : [],
      ...jobDecoder({
        input,
        sampleFps: fps,
        size: source.size,
        nativePace: false,
        seekS: run.seekS,
        maxFrames: run.frames,
      }),
      onFrame: (f) => {
        try {
          const slot = slotAt(f.ptsMs, run.seekS, fps);
          for (const a of asks)
            if (a.slot === slot)
              a.settle({
                ...frameContent(f, source.size),
                seq: a.seq,
                timeMs: Math.round((slot * 1000) / fps),
              });
          if (slot >= last) ffmpeg.kill();
        } catch (err) {
          this.o.logger.warn({ err, job_id: jobId }, 'a frame decoded again could not be kept');
          ffmpeg.kill();
        }
      },
    });
    this.running.add(ffmpeg);
    const timer = setTimeout(() => ffmpeg.kill(), Math.max(0, deadline - Date.now()));
    timer.unref();
    const exit = await ffmpeg.done.finally(() => {
      clearTimeout(timer);
      this.running.delete(ffmpeg);
    });
    if (exit.code !== 0 && !exit.killed)
      this.o.logger.warn(
        { job_id: jobId, code: exit.code, decoder_error: exit.lastError },
        'frames not decoded again',
      );
  }

  /** Kills the runs under way; later asks get no frame. */
  close(): void {
    this.closed = true;
    for (const f of this.running) f.kill();
  }
}

/** `p`'s value, or undefined once `deadline` (ms since the epoch) has passed. */
function untilDeadline<T>(p: Promise<T>, deadline: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((r) => {
    timer = setTimeout(() => r(undefined), Math.max(0, deadline - Date.now()));
    timer.unref();
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
