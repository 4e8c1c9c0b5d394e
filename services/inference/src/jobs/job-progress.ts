/**
 * What a job has done, on this replica and on the owners before it: its view's counts, the seqs published, and the
 * checkpoint another replica goes on from (ownership/). A checkpoint's tracker state is the one after its last
 * frame, so that the next owner's ids go on exactly.
 */
import type { JobCheckpoint } from '../ownership/port';
import type { FirstFrame } from './redecode-plan';
import { runningView, type JobSpec, type JobView } from './job-types';

export class JobProgress {
  readonly view: JobView;
  /** Frames published by this run (the next frame's seq is `spec.firstSeq + seq`). */
  seq = 0;
  /** A file's later frames are found again in the upload from it (frame-redecode.ts). */
  firstFrame?: FirstFrame;
  /**
   * A live frame's time is never before the last one's (across owners too). Before this run's first frame: the
   * earlier owner's last, or when there was none this run's start, so that a checkpoint taken before any frame still
   * bounds the seqs its owner may publish after it (job-admission.ts runSpec).
   */
  lastLiveTimeMs: number;
  /** The latest checkpoint taken with the tracker's state after its last frame. */
  private saved?: JobCheckpoint;

  constructor(
    private readonly spec: JobSpec,
    private readonly live: boolean,
  ) {
    this.view = runningView(spec);
    this.firstFrame = spec.resume?.firstFrame;
    this.lastLiveTimeMs = spec.resume?.lastTimeMs ?? Date.now();
    this.saved = spec.resume;
  }

  /** The seq of the next frame. */
  get nextSeq(): number {
    return this.spec.firstSeq + this.seq;
  }

  /** A frame was published at `timeMs`; `tracker`: the tracker's state after it, when it was taken. */
  published(timeMs: number, tracker: unknown): void {
    this.firstFrame ??= { seq: this.nextSeq, timeMs };
    this.seq++;
    this.view.frames_published++;
    if (tracker !== undefined) this.saved = { ...this.counts(), tracker };
  }

  /**
   * Where another replica goes on. `settled`: nothing is in detection (the job ended or left), so `trackerNow()` is
   * the tracker after the last frame published; otherwise the latest checkpoint taken.
   */
  checkpoint(settled: boolean, trackerNow: () => unknown): JobCheckpoint {
    if (settled) return { ...this.counts(), tracker: trackerNow() };
    return this.saved ?? { ...this.counts(), nextSeq: this.spec.firstSeq, published: 0 };
  }

  private counts(): JobCheckpoint {
    return {
      nextSeq: this.nextSeq,
      ...(this.firstFrame && { firstFrame: this.firstFrame }),
      published: this.view.frames_published,
      dropped: this.view.frames_dropped,
      reconnects: this.view.reconnects,
      ...(this.live && { lastTimeMs: this.lastLiveTimeMs }),
    };
  }
}
