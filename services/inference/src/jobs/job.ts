import { setTimeout as wait } from 'node:timers/promises';
import { metrics, taskReason } from '@vision/shared';
import type { JobCheckpoint } from '../ownership/port';
import { FrameDetector } from './frame-detector';
import { jobDecoder } from './ffmpeg-args';
import { FfmpegFrameSource, type SourceExit, type SourceFrame } from './frame-source';
import { FrameQueue, frameTimeMs, type StartedFrame } from './frame-queue';
import { FrameRing } from './frame-ring';
import { resumedFrame, resumePoint, type FileResume, type FirstFrame } from './redecode-plan';
import type { JobRuntimeOptions, JobSpec, JobView, ResolvedInput } from './job-types';
import { type Ending, FramePublisher } from './frame-publisher';
import { fileEnding } from './failure';
import { JobProgress } from './job-progress';
import { runLive, type LiveTarget } from './live-run';
import type { WarmStart } from './warm-start';

/** How a job leaves this replica without ending: handed over (planned), or fenced (its ownership was lost). */
type Leaving = 'handover' | 'fenced';

/**
 * One run of an inference job on this replica: ffmpeg decoding, detection, tracking, publishing to vision.frames, the
 * end. It goes on from an earlier owner's checkpoint (`spec.resume`), and leaves with its own (handOver, fence).
 */
export class Job {
  readonly finished: Promise<void>;
  private readonly progress: JobProgress;
  readonly detector: FrameDetector; // also keeps the latest picture (still())
  readonly ring: FrameRing; // recent frames by seq, for events' pictures; kept a while after the end
  private readonly publisher: FramePublisher;
  /** Frames started, counted from `seq` at each decoder run (a file frame without a time is timed by it). */
  private started = 0;
  private stopRequested = false;
  private leaving?: Leaving;
  private abortReason?: string;
  private source?: FfmpegFrameSource;
  /** The frames of the current decoder run. */
  private frames?: FrameQueue;
  /** Aborted by stop(): ends a reconnection wait at once. */
  private readonly stopped = new AbortController();
  private resolveStarted!: () => void;

  constructor(
    readonly spec: JobSpec,
    readonly input: ResolvedInput,
    private readonly rt: JobRuntimeOptions,
    /** A live stream started before this replica took the job (make-before-break): its first connection. */
    private warm?: WarmStart,
  ) {
    this.progress = new JobProgress(spec, input.live);
    this.detector = new FrameDetector(rt.engine, input.live, spec.resume?.tracker, spec.sampleFps);
    this.ring = new FrameRing(rt.ringFrames ?? 0, rt.engine.inputSize);
    this.publisher = new FramePublisher(rt.bus, rt.logger, spec, () => this.stopRequested || !!this.leaving);
    const started = new Promise<void>((r) => (this.resolveStarted = r));
    this.finished = started.then(() => this.run());
  }

  start(): void {
    this.resolveStarted();
  }

  snapshot(): JobView {
    return { ...this.progress.view };
  }

  /** The job left this replica (handed over or fenced) rather than ended. */
  get left(): boolean {
    return this.leaving !== undefined;
  }

  get running(): boolean {
    return this.progress.view.status === 'running';
  }

  /** Stops the job: its status becomes `stopped` at once; the end message follows. */
  stop(): void {
    if (this.progress.view.status !== 'running') return;
    this.stopRequested = true;
    this.progress.view.status = 'stopped';
    this.progress.view.ended_at = new Date().toISOString();
    this.source?.kill();
    this.frames?.close();
    this.stopped.abort();
  }

  /**
   * Hands the job over (a planned stop or a rebalance): decoding stops, the frames already in detection are published,
   * and the run ends with no end message. Resolves with the checkpoint the next owner goes on from.
   */
  async handOver(): Promise<JobCheckpoint> {
    if (this.running && !this.leaving) this.leave('handover');
    await this.finished.catch(() => undefined);
    return { ...this.checkpoint(), final: true };
  }

  /** The job's ownership was lost: it stops at once and publishes nothing more. */
  fence(): void {
    if (this.running && !this.leaving) this.leave('fenced');
  }

  private leave(how: Leaving): void {
    this.leaving = how;
    if (how === 'handover') this.frames?.drain();
    else this.frames?.close();
    this.source?.kill();
    this.stopped.abort();
  }

  /** Where another replica would go on: every seq before `nextSeq` is published, the tracks as they were then. */
  checkpoint(): JobCheckpoint {
    return this.progress.checkpoint(!this.running || !!this.leaving, () => this.detector.trackerState());
  }

  /** A file's first published frame: its later frames are found again in the upload from it (frame-redecode.ts). */
  get firstFrame(): FirstFrame | undefined {
    return this.progress.firstFrame;
  }

  /** Ends the job as failed (backend shutting down): like stop, but its view says failed with the reason. */
  abort(reason: string): void {
    if (this.progress.view.status !== 'running') return;
    this.abortReason = reason;
    this.stop();
    this.progress.view.status = 'failed';
    this.progress.view.reason = reason;
  }

  private async run(): Promise<void> {
    let ending: Ending;
    try {
      await this.publisher.owner(); // before anything else: results fences the owners before this one
      ending = this.input.live ? await this.runLive() : await this.runFile();
    } catch (err) {
      this.rt.logger.error({ err, job_id: this.spec.jobId }, 'job failed unexpectedly');
      ending = { status: 'failed', reason: taskReason('internal_error') };
    }
    if (this.leaving) {
      this.rt.logger.info(
        { job_id: this.spec.jobId, frames: this.progress.seq, how: this.leaving },
        'job left this replica',
      );
      return; // the next owner goes on, and says the end
    }
    if (this.stopRequested)
      ending = this.abortReason ? { status: 'failed', reason: this.abortReason } : { status: 'stopped' };
    if (this.progress.view.status === 'running') {
      this.progress.view.status = ending.status;
      if (ending.reason) this.progress.view.reason = ending.reason;
      this.progress.view.ended_at = new Date().toISOString();
    }
    // Aborted by the backend's shutdown: no end, since tasks starts the job again on the next backend.
    if (!this.abortReason)
      await this.publisher.end(this.progress.seq, ending).catch((err: unknown) => {
        this.rt.logger.error({ err, job_id: this.spec.jobId }, 'end message could not be published');
      });
    this.rt.logger.info({ ...this.progress.view }, 'job ended'); // ids, status, closed-list reason, counts
    setTimeout(() => this.ring.clear(), this.rt.ringLingerMs ?? 0).unref();
  }

  private async runFile(): Promise<Ending> {
    const exit = await this.runOnce();
    if (this.stopRequested || this.leaving) return { status: 'stopped' };
    if (exit.code !== 0) this.logDecoderExit(exit);
    return fileEnding(exit);
  }

  private runLive(): Promise<Ending> {
    return runLive({
      input: this.input,
      spec: this.spec,
      rt: this.rt,
      halted: () => this.stopRequested || !!this.leaving,
      published: () => this.progress.seq,
      reconnecting: () => this.progress.view.reconnects++,
      runOnce: (target) => this.runOnce(target),
      sleep: (ms) => this.sleep(ms),
      decoderFailed: (exit) => this.logDecoderExit(exit),
      ...(this.warm && { warm: this.warm }),
    });
  }

  private logDecoderExit(exit: SourceExit): void {
    this.rt.logger.warn(
      { job_id: this.spec.jobId, code: exit.code, signal: exit.signal, decoder_error: exit.lastError },
      'decoder failed',
    );
  }

  private async sleep(ms: number): Promise<void> {
    await wait(ms, undefined, { signal: this.stopped.signal, ref: false }).catch(() => undefined);
  }

  /** One ffmpeg run; resolves when ffmpeg has exited and every frame it gave has been handled. */
  private async runOnce(target: LiveTarget = { nativePace: false }): Promise<SourceExit> {
    const live = this.input.live;
    this.started = this.progress.seq;
    const resume = this.fileResume();
    const frames = new FrameQueue({
      live,
      liveQueue: this.rt.liveQueue,
      depth: this.detector.depth,
      start: (f) => this.startFrame(f),
      pause: () => source.pause(),
      resume: () => source.resume(),
      dropped: () => {
        this.progress.view.frames_dropped++;
        metrics.framesDropped.inc({ scene: this.spec.sceneCode, reason: 'behind' });
      },
    });
    const onFrame = (decoded: SourceFrame) => {
      if (this.stopRequested) return;
      const f = resume ? resumedFrame(decoded, resume) : decoded;
      if (!f) return source.recycle(decoded.planes); // before the frame the job goes on at
      metrics.framesDecoded.inc({ scene: this.spec.sceneCode });
      frames.push(f);
    };
    const warm = this.warm;
    this.warm = undefined; // the first connection only
    const source =
      warm?.adopt(onFrame) ??
      new FfmpegFrameSource({
        ffmpegPath: this.rt.ffmpegPath,
        read: this.input.kind === 'file' ? [this.input.input] : [],
        ...jobDecoder({
          input: this.input,
          streamInput: target.streamInput,
          sampleFps: this.spec.sampleFps,
          size: this.rt.engine.inputSize,
          ioTimeoutMs: this.rt.ioTimeoutMs,
          httpProxy: this.rt.httpProxy,
          nativePace: target.nativePace,
          seekS: resume?.seekS,
        }),
        onFrame,
      });
    this.source = source;
    this.frames = frames;
    if (this.stopRequested) frames.close();
    const done = source.done.then((exit) => {
      frames.end();
      return exit;
    });
    for (;;) {
      const next = await frames.next();
      if (!next) break;
      try {
        await this.publishFrame(next);
      } catch (err) {
        if (this.stopRequested) break;
        this.rt.logger.error({ err, job_id: this.spec.jobId }, 'frame processing failed');
        frames.close();
        source.kill();
        await done;
        throw err;
      }
      frames.done();
    }
    if (this.stopRequested) source.kill();
    return done;
  }

  /** A file job taken over from an earlier owner, on its first decoder run: where to seek, and the frame to go on at. */
  private fileResume(): FileResume | undefined {
    const first = this.progress.firstFrame;
    if (this.input.live || !this.spec.resume || !first || this.progress.seq > 0) return undefined;
    const fps = this.spec.sampleFps;
    return { ...resumePoint(this.spec.firstSeq, first, fps, 1000), fps };
  }

  /** Starts detecting a frame (its detection runs beside the frames started before it). */
  private startFrame(f: SourceFrame): StartedFrame {
    const p = this.progress;
    const timeMs = frameTimeMs(f, this.input.live, p.lastLiveTimeMs, this.started, this.spec.sampleFps);
    if (this.input.live) p.lastLiveTimeMs = timeMs;
    this.started++;
    const objects = this.detector.detect(f, timeMs);
    const held = this.ring.hold(f);
    this.source?.recycle(f.planes); // read only as its detection starts (VideoSceneSession.detectFrame)
    return { f, timeMs, objects, ...(held && { held }) };
  }

  /** Publishes a started frame once its detection is done (frames are published in the order started). */
  private async publishFrame({ f, timeMs, objects: detected, held }: StartedFrame): Promise<void> {
    const objects = await detected;
    if (this.stopRequested) return;
    const { seq, nextSeq } = this.progress;
    if (held) this.ring.put(nextSeq, timeMs, held); // before results can ask for it
    await this.publisher.frame({
      seq,
      frame_time_ms: timeMs,
      image: { width: f.width, height: f.height },
      objects,
      lower_bound: this.rt.engine.status.lower_bound,
      // Wall-clock time the frame was read from the decoder (results measures its ingest lag from it).
      captured_at_ms: f.capturedAt,
    });
    metrics.framesPublished.inc({ scene: this.spec.sceneCode });
    this.progress.published(timeMs, this.detector.stateAfter(seq + 1));
  }
}
