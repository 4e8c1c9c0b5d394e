/**
 * A live job's stream started on the replica it is offered to while its owner still runs it (the make-before-break
 * handover, docs/ARCHITECTURE.md "Who runs a video job"): the source checked and its relay pinned as the job's first
 * connection would, and a decoder whose frames are dropped until the job's run goes on with it (live-run.ts).
 */
import type { PinnedRelay } from '@vision/shared';
import { jobDecoder } from './ffmpeg-args';
import { FfmpegFrameSource, type SourceFrame } from './frame-source';
import { checkLiveSource, startRelayFor, type LiveCheck } from './live-connect';
import type { JobRuntimeOptions, ResolvedInput } from './job-types';
import type { LiveTarget } from './live-run';

/** How long a warm stream may take to give its first frame before it counts as not up. */
const FIRST_FRAME_MS = 15_000;

export class WarmStart {
  /** Resolves true at the first decoded frame; false when the decoder exits, or none came in time. */
  readonly up: Promise<boolean>;
  private exited = false;
  private adopted = false;

  private constructor(
    /** The first connection's check, as live-run.ts makes it. */
    readonly check: Extract<LiveCheck, { kind: 'ok' }>,
    readonly target: LiveTarget,
    readonly relay: PinnedRelay | undefined,
    private readonly source: FfmpegFrameSource,
    firstFrame: Promise<void>,
    /** Where its frames go once a run goes on with it (before: dropped). */
    private readonly sink: { to?: (f: SourceFrame) => void },
  ) {
    void source.done.then(() => (this.exited = true));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), FIRST_FRAME_MS).unref()));
    this.up = Promise.race([
      firstFrame.then(() => !this.exited),
      source.done.then(() => false),
      late,
    ]).finally(() => clearTimeout(timer));
  }

  /** Checks the stream's host, pins its relay and starts its decoder; undefined when the source cannot be read now. */
  static async open(
    input: ResolvedInput,
    sampleFps: number,
    rt: JobRuntimeOptions,
  ): Promise<WarmStart | undefined> {
    const check = await checkLiveSource(input, rt);
    if (check.kind !== 'ok') return undefined;
    const target: LiveTarget = { nativePace: check.http?.nativePace ?? false };
    if (check.http) target.streamInput = check.http.url;
    const pinned = await startRelayFor(input, check.pinned);
    if (pinned) target.streamInput = pinned.streamInput;
    const sink: { to?: (f: SourceFrame) => void } = {};
    let first!: () => void;
    const firstFrame = new Promise<void>((r) => (first = r));
    const source = new FfmpegFrameSource({
      ffmpegPath: rt.ffmpegPath,
      read: [],
      ...jobDecoder({
        input,
        streamInput: target.streamInput,
        sampleFps,
        size: rt.engine.inputSize,
        ioTimeoutMs: rt.ioTimeoutMs,
        httpProxy: rt.httpProxy,
        nativePace: target.nativePace,
      }),
      onFrame: (f) => {
        first();
        if (sink.to) sink.to(f);
        else source.recycle(f.planes); // before the run goes on with it: dropped
      },
    });
    return new WarmStart(check, target, pinned?.relay, source, firstFrame, sink);
  }

  /** Its decoder runs and no run went on with it yet. */
  get alive(): boolean {
    return !this.exited && !this.adopted;
  }

  /**
   * The decoder, its frames from now on given to `onFrame`; undefined when it exited already (the run connects
   * afresh). The relay is the run's to close from then on.
   */
  adopt(onFrame: (f: SourceFrame) => void): FfmpegFrameSource | undefined {
    if (this.exited || this.adopted) return undefined;
    this.adopted = true;
    this.sink.to = onFrame;
    return this.source;
  }

  /** Stops a warm stream no run went on with (its relay too: live-run.ts closes the relay of one it went on with). */
  close(): void {
    if (this.adopted) return;
    this.source.kill();
    void this.relay?.close();
  }
}

/** The warm streams of one replica, by job id: each until a run goes on with it or it is closed. */
export class WarmStarts {
  private readonly byJob = new Map<string, WarmStart>();
  private readonly opening = new Map<string, Promise<boolean>>();

  /** Starts the stream of `jobId` (once); resolves whether it is up. */
  start(
    jobId: string,
    rt: () => JobRuntimeOptions,
    input: ResolvedInput,
    sampleFps: number,
  ): Promise<boolean> {
    const known = this.byJob.get(jobId);
    if (known) return known.up;
    let p = this.opening.get(jobId);
    if (!p) {
      p = WarmStart.open(input, sampleFps, rt())
        .then((warm) => {
          if (!warm) return false;
          if (this.opening.get(jobId) !== p) {
            warm.close(); // closed while it opened
            return false;
          }
          this.byJob.set(jobId, warm);
          return warm.up;
        })
        .finally(() => {
          if (this.opening.get(jobId) === p) this.opening.delete(jobId);
        });
      this.opening.set(jobId, p);
    }
    return p;
  }

  /** The warm stream of `jobId` for its run (no longer kept here). */
  take(jobId: string): WarmStart | undefined {
    const warm = this.byJob.get(jobId);
    this.byJob.delete(jobId);
    return warm;
  }

  close(jobId: string): void {
    this.opening.delete(jobId);
    this.take(jobId)?.close();
  }

  closeAll(): void {
    for (const id of [...this.byJob.keys()]) this.close(id);
  }
}
