/** Detection and tracking of one job's frames: the scene's video session, then SORT track ids. */
import type { DetectedObject } from '@vision/shared';
import { toNormalizedBBox } from '../bbox';
import { letterboxFor } from '../model/letterbox';
import type { SceneEngine, VideoSceneSession } from '../scenes/engines';
import { SortTracker } from '../tracking/sort-tracker';
import type { SourceFrame } from './frame-source';

const round4 = (v: number) => Math.round(v * 1e4) / 1e4;

export class FrameDetector {
  private readonly session: VideoSceneSession;
  private readonly tracker = new SortTracker();

  constructor(private readonly engine: SceneEngine) {
    this.session = engine.videoSession();
  }

  /** The frame's objects with boxes in cxcywh_normalized and stable track ids. */
  async detect(f: SourceFrame, timeMs: number): Promise<DetectedObject[]> {
    const letterbox = letterboxFor(f.width, f.height, this.engine.inputSize);
    const dets = await this.session.detectFrame(
      { bgr: f.bgr, letterbox, width: f.width, height: f.height },
      timeMs,
    );
    return this.tracker.update(dets).map((d) => ({
      label: d.label,
      score: round4(d.score),
      bbox: toNormalizedBBox(d.box, f.width, f.height),
      track_id: d.trackId,
    }));
  }
}
