/**
 * Detection and tracking of one job's frames: the scene's video session, then track ids (tracking/). Several
 * frames may be in detection at once (`depth`); each is tracked after every frame started before it. The tracker's
 * state is taken about once a second, so that a checkpoint holds the tracks as they were after its last frame.
 *
 * A live job's tracker runs on capture time. The seconds a job spends moving between replicas do not age its tracks,
 * and their motion is predicted over them (ByteTracker.bridge): people seen just before keep their ids just after.
 */
import type { DetectedObject } from '@vision/shared';
import { toNormalizedBBox } from '../bbox';
import type { LabeledDetection } from '../detection-types';
import { letterboxFor } from '../model/letterbox';
import type { SceneEngine, VideoSceneSession } from '../scenes/engines';
import { ByteTracker, type TrackerState } from '../tracking/byte-tracker';
import type { SourceFrame } from './frame-source';
import { LatestStill, type Still } from './latest-still';

const round4 = (v: number) => Math.round(v * 1e4) / 1e4;

/** What a checkpoint keeps of the tracking (ownership/): the tracker's state, and its clock at its last frame. */
export interface TrackingCheckpoint {
  state: TrackerState;
  clockMs: number;
}

const isTrackingCheckpoint = (v: unknown): v is TrackingCheckpoint =>
  typeof v === 'object' &&
  v !== null &&
  'state' in v &&
  typeof (v as { clockMs?: unknown }).clockMs === 'number';

export class FrameDetector {
  private readonly session: VideoSceneSession;
  private readonly tracker: ByteTracker;
  /** Frames tracked so far (this run). */
  private trackedFrames = 0;
  /** The tracker's state after frame `frames` of this run, taken about once a second. */
  private taken?: { frames: number; at: TrackingCheckpoint };
  /** The tracker's clock (media or capture time) at the last frame tracked. */
  private clockMs = 0;
  /** Live, taken over: the tracker's clock at the last frame before the handover (the next one comes a frame later). */
  private resumedAt?: number;
  private readonly frameMs: number;
  private readonly stateEvery: number;
  /** The tracking of the frame started last (settled either way): the next frame's waits for it. */
  private tracked: Promise<unknown> = Promise.resolve();
  /** A copy of a recent frame, the job's picture (for drawing zones and lines on it). */
  private readonly picture: LatestStill;

  constructor(
    private readonly engine: SceneEngine,
    live: boolean,
    /** An earlier owner's tracking checkpoint (ownership/): the ids go on. */
    restore: unknown,
    sampleFps: number,
  ) {
    const from = isTrackingCheckpoint(restore) ? restore : undefined;
    this.tracker = from ? ByteTracker.restore(from.state) : new ByteTracker();
    if (from && live) this.resumedAt = from.clockMs;
    this.clockMs = from?.clockMs ?? 0;
    this.frameMs = 1000 / sampleFps;
    this.stateEvery = Math.max(1, Math.ceil(sampleFps));
    this.session = engine.videoSession({ live });
    this.picture = new LatestStill(engine.inputSize);
  }

  /** The latest picture kept (JPEG, encoded when first asked); undefined before the first frame. */
  still(): Promise<Still> | undefined {
    return this.picture.still();
  }

  /** The tracking now (the job has no frame in detection: handed over or ended). */
  trackerState(): TrackingCheckpoint {
    return { state: this.tracker.snapshot(), clockMs: this.clockMs };
  }

  /** The tracking after frame `frames` of this run, when it was taken then. */
  stateAfter(frames: number): TrackingCheckpoint | undefined {
    return this.taken?.frames === frames ? this.taken.at : undefined;
  }

  /** How many frames may be in detection at once (started and not yet resolved). */
  get depth(): number {
    return this.session.depth;
  }

  /**
   * Starts detecting `f` now; resolves with the frame's objects (boxes in cxcywh_normalized, stable track
   * ids), tracked in the order the frames were started whatever order their detections finish in.
   */
  detect(f: SourceFrame, timeMs: number): Promise<DetectedObject[]> {
    const letterbox = letterboxFor(f.width, f.height, this.engine.inputSize);
    this.picture.offer(f, timeMs);
    // Started at once (an async body runs up to its first await), a throw becoming this frame's rejection.
    const dets = (async () =>
      this.session.detectFrame({ planes: f.planes, letterbox, width: f.width, height: f.height }, timeMs))();
    const objects = Promise.all([dets, this.tracked]).then(([d]) => this.track(d, f, timeMs));
    this.tracked = objects.catch(() => undefined);
    return objects;
  }

  private track(dets: LabeledDetection[], f: SourceFrame, timeMs: number): DetectedObject[] {
    if (this.resumedAt !== undefined) this.tracker.bridge(timeMs - (this.resumedAt + this.frameMs));
    this.resumedAt = undefined;
    this.clockMs = timeMs;
    // Every object detected comes out; a track id only once its track is confirmed.
    const tracked = this.tracker.label(dets, this.clockMs, f.width);
    if (++this.trackedFrames % this.stateEvery === 0)
      this.taken = { frames: this.trackedFrames, at: this.trackerState() };
    return tracked.map((d) => ({
      label: d.label,
      score: round4(d.score),
      bbox: toNormalizedBBox(d.box, f.width, f.height),
      track_id: d.trackId,
    }));
  }
}
