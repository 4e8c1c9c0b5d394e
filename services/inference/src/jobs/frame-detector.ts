/**
 * Detection and tracking of one job's frames: the scene's video session, then SORT track ids. Several
 * frames may be in detection at once (`depth`); each is tracked after every frame started before it.
 */
import type { DetectedObject } from '@vision/shared';
import { toNormalizedBBox } from '../bbox';
import type { LabeledDetection } from '../detection-types';
import { letterboxFor } from '../model/letterbox';
import type { SceneEngine, VideoSceneSession } from '../scenes/engines';
import { SortTracker } from '../tracking/sort-tracker';
import type { SourceFrame } from './frame-source';
import { LatestStill, type Still } from './latest-still';

const round4 = (v: number) => Math.round(v * 1e4) / 1e4;

export class FrameDetector {
  private readonly session: VideoSceneSession;
  private readonly tracker = new SortTracker();
  /** The tracking of the frame started last (settled either way): the next frame's waits for it. */
  private tracked: Promise<unknown> = Promise.resolve();
  /** A copy of a recent frame, the job's picture (for drawing zones and lines on it). */
  private readonly picture: LatestStill;

  constructor(
    private readonly engine: SceneEngine,
    live: boolean,
  ) {
    this.session = engine.videoSession({ live });
    this.picture = new LatestStill(engine.inputSize);
  }

  /** The latest picture kept (JPEG, encoded when first asked); undefined before the first frame. */
  still(): Promise<Still> | undefined {
    return this.picture.still();
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
    const objects = Promise.all([dets, this.tracked]).then(([d]) => this.track(d, f));
    this.tracked = objects.catch(() => undefined);
    return objects;
  }

  private track(dets: LabeledDetection[], f: SourceFrame): DetectedObject[] {
    return this.tracker.update(dets).map((d) => ({
      label: d.label,
      score: round4(d.score),
      bbox: toNormalizedBBox(d.box, f.width, f.height),
      track_id: d.trackId,
    }));
  }
}
