/**
 * The frames of one decoder run between ffmpeg and publishing. Decoded frames wait (a live source keeps
 * only the freshest `liveQueue` of them; a file's decoder is paused while two wait); up to `depth` are in
 * detection at once, so that the model's sessions all work while a job runs; they leave in the order
 * they were decoded.
 */
import type { HeldFrame } from './frame-ring';
import type { DetectedObject } from '@vision/shared';
import type { SourceFrame } from './frame-source';

/** A frame whose detection has started. */
export interface StartedFrame {
  f: SourceFrame;
  timeMs: number;
  objects: Promise<DetectedObject[]>;
  /** The frame's copy for the job's ring of recent frames, while it is armed (frame-ring.ts). */
  held?: HeldFrame;
}

/**
 * A frame's time: a live frame's capture time, strictly increasing within the task (frames that leave
 * ffmpeg in one burst share a millisecond); a file frame's presentation time, or when it has none its
 * index at the sampling rate.
 */
export function frameTimeMs(
  f: SourceFrame,
  live: boolean,
  lastLiveTimeMs: number,
  index: number,
  sampleFps: number,
): number {
  if (live) return Math.max(f.capturedAt, lastLiveTimeMs + 1);
  return Number.isFinite(f.ptsMs) ? f.ptsMs : Math.round((index * 1000) / sampleFps);
}

export interface FrameQueueOptions {
  live: boolean;
  /** Live: decoded frames kept waiting when detection is behind (the oldest is dropped first). */
  liveQueue: number;
  /** Frames in detection at once (FrameDetector.depth). */
  depth: number;
  /** Starts a frame's detection (called in decoding order). */
  start(f: SourceFrame): StartedFrame;
  /** Back-pressure on a file's decoder. */
  pause(): void;
  resume(): void;
  /** A live frame was dropped because detection was behind. */
  dropped(): void;
}

export class FrameQueue {
  private readonly waiting: SourceFrame[] = [];
  /** Started frames not yet taken by `done()`, oldest first. */
  private readonly started: StartedFrame[] = [];
  private detecting = 0;
  private ended = false;
  private closed = false;
  private draining = false;
  private wake?: () => void;

  constructor(private readonly o: FrameQueueOptions) {}

  /** A decoded frame. */
  push(f: SourceFrame): void {
    if (this.closed || this.draining) return;
    if (this.o.live && this.waiting.length >= this.o.liveQueue) {
      this.waiting.shift(); // keep the freshest frames
      this.o.dropped();
    }
    this.waiting.push(f);
    if (!this.o.live && this.waiting.length >= 2) this.o.pause();
    this.pump();
  }

  /** The decoder exited: no frame follows. */
  end(): void {
    this.ended = true;
    this.wake?.();
  }

  /**
   * The job is handed over: no frame starts any more (those waiting are let go: the next owner decodes them), and
   * `next()` gives the frames already started, then undefined.
   */
  drain(): void {
    this.waiting.length = 0;
    this.ended = true;
    this.draining = true;
    this.wake?.();
  }

  /** No frame is started any more (the job stops); `next()` answers undefined. */
  close(): void {
    this.closed = true;
    this.wake?.();
  }

  /**
   * The oldest started frame (it stays first until `done()`); undefined once the decoder has ended and
   * every frame was taken, or after `close()`.
   */
  async next(): Promise<StartedFrame | undefined> {
    for (;;) {
      if (this.closed) return undefined;
      if (this.started.length > 0) return this.started[0];
      if (this.ended && this.waiting.length === 0) return undefined;
      await new Promise<void>((r) => (this.wake = r));
      this.wake = undefined;
    }
  }

  /** The frame `next()` gave is handled: the next one may start. */
  done(): void {
    this.started.shift();
    this.pump();
  }

  private pump(): void {
    // A frame whose detection is done but that is not yet published holds a place too: at most one more
    // than `depth` frames are kept started (publishing may retry for a while; decoding waits meanwhile).
    const { depth } = this.o;
    while (!this.closed && this.detecting < depth && this.started.length <= depth && this.waiting.length) {
      const f = this.waiting.shift() as SourceFrame;
      if (!this.o.live && this.waiting.length < 1) this.o.resume();
      const s = this.o.start(f);
      this.detecting++;
      // Also marks a rejection as handled: the one left behind when the job stops or fails is dropped.
      const settled = () => {
        this.detecting--;
        this.pump();
      };
      s.objects.then(settled, settled);
      this.started.push(s);
      this.wake?.();
    }
  }
}
