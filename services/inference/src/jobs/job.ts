import { setTimeout as wait } from 'node:timers/promises';
import { metrics, redactText, taskReason, type PinnedRelay } from '@vision/shared';
import { FrameDetector } from './frame-detector';
import { isFiniteHttp, type SourceKind } from '../net/playlist';
import { jobDecoder } from './ffmpeg-args';
import { FfmpegFrameSource, type SourceExit, type SourceFrame } from './frame-source';
import { FrameQueue, frameTimeMs, type StartedFrame } from './frame-queue';
import { FrameRing } from './frame-ring';
import type { FirstFrame } from './redecode-plan';
import {
  runningView,
  type JobRuntimeOptions,
  type JobSpec,
  type JobView,
  type ResolvedInput,
} from './job-types';
import { checkLiveSource, startRelayFor } from './live-connect';
import { type Ending, FramePublisher } from './frame-publisher';
import { fileEnding, gaveUpReason, isDecoderCrash, liveAttemptEnding } from './failure';

/** One inference job: ffmpeg decoding, detection, tracking, publishing to vision.frames, the end. In memory only. */
export class Job {
  readonly finished: Promise<void>;
  private readonly view: JobView;
  readonly detector: FrameDetector; // also keeps the latest picture (still())
  readonly ring: FrameRing; // recent frames by seq, for events' pictures; kept a while after the end
  firstFrame?: FirstFrame; // a file's later frames are found again from it (frame-redecode.ts)
  private readonly publisher: FramePublisher;
  /** Frames published (the next frame's seq). */
  private seq = 0;
  /** Frames started, counted from `seq` at each decoder run (a file frame without a time is timed by it). */
  private started = 0;
  private lastLiveTimeMs = 0;
  /** An HTTP(S) stream that is a file (it announced its length), not a playlist: read at its native rate. */
  private nativePace = false;
  /** HTTP(S): what the URL served at the first look (net/playlist.ts); only `file` and `vod` can succeed. */
  private sourceKind?: SourceKind;
  private stopRequested = false;
  private abortReason?: string;
  /** The checked final address of an http(s) stream after its redirects (set before each connection). */
  private streamInput?: string;
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
  ) {
    this.view = runningView(spec);
    this.detector = new FrameDetector(rt.engine, input.live);
    this.ring = new FrameRing(rt.ringFrames ?? 0, rt.engine.inputSize);
    this.publisher = new FramePublisher(rt.bus, rt.logger, spec, () => this.stopRequested);
    const started = new Promise<void>((r) => (this.resolveStarted = r));
    this.finished = started.then(() => this.run());
  }

  start(): void {
    this.resolveStarted();
  }

  snapshot(): JobView {
    return { ...this.view };
  }

  get running(): boolean {
    return this.view.status === 'running';
  }

  /** Stops the job: its status becomes `stopped` at once; the end message follows. */
  stop(): void {
    if (this.view.status !== 'running') return;
    this.stopRequested = true;
    this.view.status = 'stopped';
    this.view.ended_at = new Date().toISOString();
    this.source?.kill();
    this.frames?.close();
    this.stopped.abort();
  }

  /** Ends the job as failed (backend shutting down): like stop, but its view says failed with the reason. */
  abort(reason: string): void {
    if (this.view.status !== 'running') return;
    this.abortReason = reason;
    this.stop();
    this.view.status = 'failed';
    this.view.reason = reason;
  }

  private async run(): Promise<void> {
    let ending: Ending;
    try {
      ending = this.input.live ? await this.runLive() : await this.runFile();
    } catch (err) {
      this.rt.logger.error({ err, job_id: this.spec.jobId }, 'job failed unexpectedly');
      ending = { status: 'failed', reason: taskReason('internal_error') };
    }
    if (this.stopRequested)
      ending = this.abortReason ? { status: 'failed', reason: this.abortReason } : { status: 'stopped' };
    if (this.view.status === 'running') {
      this.view.status = ending.status;
      if (ending.reason) this.view.reason = ending.reason;
      this.view.ended_at = new Date().toISOString();
    }
    // Aborted by the backend's shutdown: no end, since tasks starts the job again on the next backend.
    if (!this.abortReason)
      await this.publisher.end(this.seq, ending).catch((err: unknown) => {
        this.rt.logger.error({ err, job_id: this.spec.jobId }, 'end message could not be published');
      });
    this.rt.logger.info({ ...this.view }, 'job ended'); // ids, status, closed-list reason, counts
    setTimeout(() => this.ring.clear(), this.rt.ringLingerMs ?? 0).unref();
  }

  private async runFile(): Promise<Ending> {
    const exit = await this.runOnce();
    if (this.stopRequested) return { status: 'stopped' };
    if (exit.code !== 0) this.logDecoderExit(exit);
    return fileEnding(exit);
  }

  private async runLive(): Promise<Ending> {
    let lostSince = Date.now();
    let everConnected = false;
    let delay = this.rt.reconnectMinMs;
    let crashes = 0;
    for (let attempt = 0; ; attempt++) {
      if (this.stopRequested) return { status: 'stopped' };
      if (attempt > 0) {
        this.view.reconnects++;
        metrics.decoderRestarts.inc({ reason: 'stream_lost' });
      }
      let exit: SourceExit | undefined;
      let reason: string | undefined;
      let pinned: string | undefined;
      const check = await checkLiveSource(this.input, this.rt, this.sourceKind);
      if (check.kind === 'refused') return { status: 'failed', reason: taskReason('stream_refused') };
      if (check.kind === 'unreachable') reason = check.reason;
      else {
        pinned = check.pinned;
        if (check.http) {
          this.streamInput = check.http.url;
          this.nativePace = check.http.nativePace;
          // Decided once: a playlist that was live stays live (a restarted server may serve a stale
          // playlist that ends with EXT-X-ENDLIST; that is the server gone, not the end of the stream).
          this.sourceKind ??= check.http.sourceKind;
        }
      }
      if (!reason) {
        const before = this.seq;
        const relay = await this.pinnedRelay(pinned);
        try {
          exit = await this.runOnce();
        } finally {
          await relay?.close();
        }
        if (relay?.refused()) return { status: 'failed', reason: taskReason('stream_refused') };
        if (this.stopRequested) return { status: 'stopped' };
        if (this.seq > before || exit.frames > 0) {
          lostSince = Date.now();
          everConnected = true;
          delay = this.rt.reconnectMinMs;
        }
        crashes = isDecoderCrash(exit) ? crashes + 1 : 0;
        const attempt = liveAttemptEnding(exit, {
          crashes,
          finiteHttp: isFiniteHttp(this.input.kind, this.sourceKind),
          sampleFps: this.spec.sampleFps,
        });
        if (attempt.ending?.status === 'failed' || crashes > 0) this.logDecoderExit(exit);
        if (attempt.ending) return attempt.ending;
        reason = attempt.reason;
      }
      const gone = Date.now() - lostSince;
      if (gone >= this.rt.giveupMs) {
        this.rt.logger.warn({ job_id: this.spec.jobId, reason }, 'stream given up');
        return { status: 'failed', reason: gaveUpReason(reason, this.rt.giveupMs, everConnected) };
      }
      this.rt.logger.warn(
        { job_id: this.spec.jobId, reason, retry_in_ms: delay, url: redactText(this.input.input) },
        'stream lost, reconnecting',
      );
      await this.sleep(Math.min(delay, Math.max(0, this.rt.giveupMs - gone)));
      delay = Math.min(delay * 2, this.rt.reconnectMaxMs);
    }
  }

  /** RTSP and RTMP connect through a relay pinned to the checked address (live-connect.ts). */
  private async pinnedRelay(address: string | undefined): Promise<PinnedRelay | undefined> {
    const pinned = await startRelayFor(this.input, address);
    if (pinned) this.streamInput = pinned.streamInput;
    return pinned?.relay;
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
  private async runOnce(): Promise<SourceExit> {
    const live = this.input.live;
    this.started = this.seq;
    const frames = new FrameQueue({
      live,
      liveQueue: this.rt.liveQueue,
      depth: this.detector.depth,
      start: (f) => this.startFrame(f),
      pause: () => source.pause(),
      resume: () => source.resume(),
      dropped: () => {
        this.view.frames_dropped++;
        metrics.framesDropped.inc({ scene: this.spec.sceneCode, reason: 'behind' });
      },
    });
    const source = new FfmpegFrameSource({
      ffmpegPath: this.rt.ffmpegPath,
      read: this.input.kind === 'file' ? [this.input.input] : [],
      ...jobDecoder({
        input: this.input,
        streamInput: this.streamInput,
        sampleFps: this.spec.sampleFps,
        size: this.rt.engine.inputSize,
        ioTimeoutMs: this.rt.ioTimeoutMs,
        httpProxy: this.rt.httpProxy,
        nativePace: this.nativePace,
      }),
      onFrame: (f) => {
        if (this.stopRequested) return;
        metrics.framesDecoded.inc({ scene: this.spec.sceneCode });
        frames.push(f);
      },
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

  /** Starts detecting a frame (its detection runs beside the frames started before it). */
  private startFrame(f: SourceFrame): StartedFrame {
    const timeMs = frameTimeMs(f, this.input.live, this.lastLiveTimeMs, this.started, this.spec.sampleFps);
    if (this.input.live) this.lastLiveTimeMs = timeMs;
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
    const seq = this.seq;
    if (held) this.ring.put(this.spec.firstSeq + seq, timeMs, held); // before results can ask for it
    this.firstFrame ??= { seq: this.spec.firstSeq + seq, timeMs };
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
    this.seq = seq + 1;
    this.view.frames_published = this.seq;
  }
}
