import {
  TOPICS,
  metrics,
  redactUrl,
  startPinnedRelay,
  taskReason,
  throughRelay,
  type PinnedRelay,
  type Bus,
  type DetectedObject,
  type Logger,
} from '@vision/shared';
import { toNormalizedBBox } from '../bbox';
import { letterboxFor } from '../model/letterbox';
import type { SceneEngine, VideoSceneSession } from '../scenes/engines';
import { SortTracker } from '../tracking/sort-tracker';
import { checkStreamHost, type Resolver } from '../net/stream-url';
import { resolveRedirects, sourceKindOf } from '../net/redirects';
import { isPlaylist, type SourceKind } from '../net/playlist';
import { ffmpegArgs, type InputKind } from './ffmpeg-args';
import { FfmpegFrameSource, type SourceExit, type SourceFrame } from './frame-source';
import type { JobSpec, JobStatus, JobView } from './job-types';
import { CRASH_LOOP, classifyDecoderError, gaveUpReason, isDecoderCrash } from './failure';

/** Where ffmpeg reads from, after resolving an object key or checking a stream URL. */
export interface ResolvedInput {
  kind: InputKind;
  input: string;
  /** Live stream: frame times are capture times, reconnects with backoff, frames dropped when behind. */
  live: boolean;
  /** Host to check again before each (re)connection. */
  host?: string;
}

export interface JobRuntimeOptions {
  bus: Bus;
  engine: SceneEngine;
  logger: Logger;
  ffmpegPath: string;
  giveupMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  liveQueue: number;
  allowPrivate: boolean;
  resolve?: Resolver;
  ioTimeoutMs?: number;
  /** Egress proxy for the HTTP(S) connections of caller-given streams (not for stored objects). */
  httpProxy?: string;
}

type Ending = { status: Exclude<JobStatus, 'running'>; reason?: string };

/** The tcUrl ffmpeg would send for the caller's URL (`rtmp://host[:port]/app`), kept when it connects via the relay. */
function rtmpTcUrl(input: string): string {
  const u = new URL(input);
  const app = u.pathname.split('/').filter(Boolean)[0] ?? '';
  return `${u.protocol}//${u.host}/${app}`;
}

const round4 = (v: number) => Math.round(v * 1e4) / 1e4;

/**
 * One inference job: ffmpeg decoding, detection, tracking and publishing to vision.frames, then the
 * end message. State is in memory only.
 */
export class Job {
  readonly finished: Promise<void>;
  private readonly view: JobView;
  private readonly session: VideoSceneSession;
  private readonly tracker = new SortTracker();
  private seq = 0;
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
  private queue: SourceFrame[] = [];
  private wake?: () => void;
  private cancelSleep?: () => void;
  private resolveStarted!: () => void;

  constructor(
    readonly spec: JobSpec,
    private readonly input: ResolvedInput,
    private readonly rt: JobRuntimeOptions,
  ) {
    this.view = {
      job_id: spec.jobId,
      scene_code: spec.sceneCode,
      status: 'running',
      frames_published: 0,
      frames_dropped: 0,
      reconnects: 0,
      started_at: new Date().toISOString(),
    };
    this.session = rt.engine.videoSession();
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
    this.wake?.();
    this.cancelSleep?.();
  }

  /** Ends the job as failed (backend shutting down): like stop, but the end says failed with the reason. */
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
    try {
      await this.publishEnd(ending);
    } catch (err) {
      this.rt.logger.error({ err, job_id: this.spec.jobId }, 'end message could not be published');
    }
    this.rt.logger.info(
      {
        job_id: this.spec.jobId,
        status: this.view.status,
        frames: this.seq,
        dropped: this.view.frames_dropped,
      },
      'job ended',
    );
  }

  private async runFile(): Promise<Ending> {
    const exit = await this.runOnce();
    if (this.stopRequested) return { status: 'stopped' };
    if (exit.code === 0 && exit.frames > 0) return { status: 'succeeded' };
    if (exit.code === 0) return { status: 'failed', reason: taskReason('no_video_frames') };
    this.logDecoderExit(exit);
    if (isDecoderCrash(exit))
      return { status: 'failed', reason: taskReason('decoder_unavailable', 'crashed') };
    const { code, detail } = classifyDecoderError(exit.lastError, false);
    return { status: 'failed', reason: taskReason(code, detail) };
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
      if (this.input.host) {
        const check = await checkStreamHost(this.input.host, {
          allowPrivate: this.rt.allowPrivate,
          resolve: this.rt.resolve,
        });
        if (!check.ok && check.reason.includes('refused'))
          return { status: 'failed', reason: taskReason('stream_refused') };
        if (!check.ok) reason = 'host does not resolve';
        else pinned = check.addresses[0];
        if (!reason && (this.input.kind === 'http' || this.input.kind === 'https')) {
          const walk = { allowPrivate: this.rt.allowPrivate, resolve: this.rt.resolve };
          const hops = await resolveRedirects(this.input.input, walk);
          if (!hops.ok && hops.refused) return { status: 'failed', reason: taskReason('stream_refused') };
          if (!hops.ok) reason = hops.reason.replace(/:.*$/, '');
          else {
            this.streamInput = hops.url;
            this.nativePace = hops.finite === true && !isPlaylist(hops.url, hops.contentType);
            // Decided once: a playlist that was live stays live (a restarted server may serve a stale
            // playlist that ends with EXT-X-ENDLIST; that is the server gone, not the end of the stream).
            this.sourceKind ??= await sourceKindOf(hops, walk);
          }
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
        if (classifyDecoderError(exit.lastError, true).code === 'decoder_unavailable') {
          this.logDecoderExit(exit);
          return { status: 'failed', reason: taskReason('decoder_unavailable') };
        }
        // A decoder that keeps crashing is ours to fix, not a stream to wait for: fail (refunded) at once.
        crashes = isDecoderCrash(exit) ? crashes + 1 : 0;
        if (crashes > 0) this.logDecoderExit(exit);
        if (crashes >= CRASH_LOOP)
          return { status: 'failed', reason: taskReason('decoder_unavailable', `crashed ${crashes} times`) };
        // A progressive file or a finished (VOD) playlist served over HTTP(S) ends like a file once its last
        // frame was decoded (a server restarted mid-file cuts it short: that reconnects). A live playlist,
        // RTSP and RTMP never end `succeeded`, whatever ffmpeg's exit status (an FLV relay announces its
        // source's duration too; a stale playlist of a restarted HLS server ends with EXT-X-ENDLIST).
        if (this.reachedEnd(exit)) return { status: 'succeeded' };
        reason = exit.lastError ?? `stream ended (decoder status ${exit.code ?? exit.signal})`;
      }
      const gone = Date.now() - lostSince;
      if (gone >= this.rt.giveupMs) {
        this.rt.logger.warn({ job_id: this.spec.jobId, reason }, 'stream given up');
        return { status: 'failed', reason: gaveUpReason(reason, this.rt.giveupMs, everConnected) };
      }
      this.rt.logger.warn(
        { job_id: this.spec.jobId, reason, retry_in_ms: delay, url: redactUrl(this.input.input) },
        'stream lost, reconnecting',
      );
      await this.sleep(Math.min(delay, Math.max(0, this.rt.giveupMs - gone)));
      delay = Math.min(delay * 2, this.rt.reconnectMaxMs);
    }
  }

  /**
   * RTSP and RTMP: ffmpeg connects through a loopback relay to the address just checked (no second
   * resolution: DNS rebinding cannot reach another address), and RTSP redirects are refused there.
   * HTTP(S) goes through the egress proxy instead.
   */
  private async pinnedRelay(address: string | undefined): Promise<PinnedRelay | undefined> {
    const kind = this.input.kind;
    if (!address || (kind !== 'rtsp' && kind !== 'rtmp')) return undefined;
    const url = new URL(this.input.input);
    const relay = await startPinnedRelay({
      address,
      port: url.port ? Number(url.port) : kind === 'rtsp' ? 554 : 1935,
      protocol: kind,
    });
    this.streamInput = throughRelay(this.input.input, relay);
    return relay;
  }

  /** An HTTP(S) file (it announced a duration) whose last frames were decoded, as opposed to a cut transfer. */
  private reachedEnd(exit: SourceExit): boolean {
    const httpLike = this.input.kind === 'http' || this.input.kind === 'https';
    const finite = this.sourceKind === 'file' || this.sourceKind === 'vod';
    if (!httpLike || !finite || exit.code !== 0 || typeof exit.duration !== 'number' || exit.frames === 0)
      return false;
    const slackMs = Math.max(2000, 3000 / this.spec.sampleFps);
    return !Number.isFinite(exit.lastPtsMs) || exit.lastPtsMs >= exit.duration * 1000 - slackMs;
  }

  private logDecoderExit(exit: SourceExit): void {
    this.rt.logger.warn(
      { job_id: this.spec.jobId, code: exit.code, signal: exit.signal, decoder_error: exit.lastError },
      'decoder failed',
    );
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      t.unref();
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.cancelSleep = done;
    });
  }

  /** One ffmpeg run; resolves when ffmpeg has exited and every queued frame has been handled. */
  private async runOnce(): Promise<SourceExit> {
    const size = this.rt.engine.inputSize;
    const live = this.input.live;
    this.queue = [];
    const source = new FfmpegFrameSource({
      ffmpegPath: this.rt.ffmpegPath,
      args: ffmpegArgs({
        input: this.streamInput ?? this.input.input,
        kind: this.input.kind,
        live,
        sampleFps: this.spec.sampleFps,
        size,
        ioTimeoutMs: this.rt.ioTimeoutMs,
        httpProxy: live ? this.rt.httpProxy : undefined,
        nativePace: this.nativePace,
        rtmpTcUrl: this.input.kind === 'rtmp' ? rtmpTcUrl(this.input.input) : undefined,
      }),
      frameBytes: size * size * 3,
      // A live decoder that runs without producing frames is restarted (its timeouts only see dead sockets).
      stallMs: live ? Math.max(this.rt.ioTimeoutMs ?? 10_000, 3000 / this.spec.sampleFps) : undefined,
      onFrame: (f) => {
        if (this.stopRequested) return;
        metrics.framesDecoded.inc({ scene: this.spec.sceneCode });
        if (live && this.queue.length >= this.rt.liveQueue) {
          this.queue.shift(); // keep the freshest frames
          this.view.frames_dropped++;
          metrics.framesDropped.inc({ scene: this.spec.sceneCode, reason: 'behind' });
        }
        this.queue.push(f);
        if (!live && this.queue.length >= 2) source.pause();
        this.wake?.();
      },
    });
    this.source = source;
    if (this.stopRequested) source.kill();
    let exited = false;
    const done = source.done.then((exit) => {
      exited = true;
      this.wake?.();
      return exit;
    });
    for (;;) {
      if (this.stopRequested) {
        source.kill();
        break;
      }
      const frame = this.queue.shift();
      if (!frame) {
        if (exited) break;
        await new Promise<void>((r) => (this.wake = r));
        this.wake = undefined;
        continue;
      }
      if (!live && this.queue.length < 1) source.resume();
      try {
        await this.processFrame(frame);
      } catch (err) {
        if (this.stopRequested) break;
        this.rt.logger.error({ err, job_id: this.spec.jobId }, 'frame processing failed');
        source.kill();
        await done;
        throw err;
      }
    }
    return done;
  }

  private async processFrame(f: SourceFrame): Promise<void> {
    const size = this.rt.engine.inputSize;
    const letterbox = letterboxFor(f.width, f.height, size);
    // A live frame's time is its capture time, strictly increasing within the task (frames that leave
    // ffmpeg in one burst share a millisecond).
    const timeMs = this.input.live
      ? Math.max(f.capturedAt, this.lastLiveTimeMs + 1)
      : Number.isFinite(f.ptsMs)
        ? f.ptsMs
        : Math.round((this.seq * 1000) / this.spec.sampleFps);
    const dets = await this.session.detectFrame(
      { bgr: f.bgr, letterbox, width: f.width, height: f.height },
      timeMs,
    );
    const tracked = this.tracker.update(dets);
    const objects: DetectedObject[] = tracked.map((d) => ({
      label: d.label,
      score: round4(d.score),
      bbox: toNormalizedBBox(d.box, f.width, f.height),
      track_id: d.trackId,
    }));
    if (this.stopRequested) return;
    const seq = this.seq;
    const taskId = this.spec.jobId;
    await this.publish({
      schema: 1,
      type: 'frame',
      event_id: `${taskId}:${seq}`,
      task_id: taskId,
      seq,
      frame_id: `${taskId}:${seq}`,
      frame_time_ms: timeMs,
      image: { width: f.width, height: f.height },
      objects,
      lower_bound: this.rt.engine.status.lower_bound,
      // Wall-clock time the frame was read from the decoder (results measures its ingest lag from it).
      captured_at_ms: f.capturedAt,
    });
    metrics.framesPublished.inc({ scene: this.spec.sceneCode });
    this.seq = seq + 1;
    if (this.input.live) this.lastLiveTimeMs = timeMs;
    this.view.frames_published = this.seq;
  }

  private async publishEnd(ending: Ending): Promise<void> {
    const taskId = this.spec.jobId;
    await this.publish(
      {
        schema: 1,
        type: 'end',
        event_id: `${taskId}:end`,
        task_id: taskId,
        seq: this.seq,
        frames: this.seq,
        status: ending.status,
        ...(ending.reason ? { reason: ending.reason } : {}),
      },
      true,
    );
  }

  /** Publishes one message keyed by the task id, retrying with backoff (at least once). */
  private async publish(value: object, isEnd = false): Promise<void> {
    let delay = 200;
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await this.rt.bus.publish(TOPICS.frames, [{ key: this.spec.jobId, value }]);
        return;
      } catch (err) {
        if ((!isEnd && this.stopRequested) || Date.now() > deadline) throw err;
        this.rt.logger.warn({ err, job_id: this.spec.jobId }, 'publish failed, retrying');
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 5000);
      }
    }
  }
}
