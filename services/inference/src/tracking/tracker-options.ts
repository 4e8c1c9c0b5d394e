import type { KalmanNoise } from './kalman';

/** The options of ByteTracker (./byte-tracker), each a step of its association. */
export interface ByteTrackerOptions {
  /** Detections at least this score are associated first and may start tracks. */
  highScore?: number;
  /** Detections from this score up to highScore are only associated to tracks seen in the last frame. */
  lowScore?: number;
  /**
   * Least score of a detection that confirms a new track: any detection left starts or continues a tentative track,
   * confirmed (minHits, confirmS) only once one of its detections has at least this score.
   */
  newTrackScore?: number;
  /** Detections under this score are used for association only and never come out. */
  outputMinScore?: number;
  /** Least IoU × score of a first association. */
  matchIou?: number;
  /** Least IoU of a low-score association. */
  lowMatchIou?: number;
  /** Least IoU of a recovery by a track's last observed box. 0 turns the recovery off. */
  recoverIou?: number;
  /**
   * Buffered IoU (C-BIoU): confirmed tracks still unmatched are matched to the high-score detections left with
   * both boxes widened by this share of their width and height on each side (motion between sparse frames). 0: off.
   */
  bufferScale?: number;
  /** Least buffered IoU of that match. */
  bufferMatchIou?: number;
  /** Least IoU × score between a tentative track and its second detection. */
  tentativeMatchIou?: number;
  /** How long (seconds of media time) a track not seen is kept and may be found again. */
  lostBufferS?: number;
  /** Frames in a row a new track must be seen in to be confirmed (1: at once)... */
  minHits?: number;
  /** ...and for how long (seconds of media time from its first detection). */
  confirmS?: number;
  /** The tracks of the tracker's first frame are confirmed at once, as ByteTrack's (nothing came before them). */
  confirmFirstFrame?: boolean;
  noise?: Partial<KalmanNoise>;
}

/**
 * Tuned on MOT15 (bench/tracking.bench.js, docs/TRACKING.md), the same at every frame rate. The score bounds are
 * those of MOT15's public detections (all at 0.5 or more): the detector's weaker ones, which the service keeps down
 * to the stored threshold, continue tracks and count in a new track's frames, but confirm none on their own (TUD-Campus
 * end to end, test/e2e/tracking-ground-truth; a car coming in first at 0.34, then at 0.57, 0.54, 0.78 is confirmed in
 * its third frame, as before the bounds, in time for a line it reaches there: test/e2e/analytics).
 */
export const DEFAULT_TRACKER_OPTIONS: Readonly<Required<Omit<ByteTrackerOptions, 'noise'>>> & {
  noise: Readonly<KalmanNoise>;
} = {
  highScore: 0.5,
  lowScore: 0,
  newTrackScore: 0.55,
  outputMinScore: 0,
  matchIou: 0.2,
  lowMatchIou: 0.5,
  recoverIou: 0,
  bufferScale: 0.3,
  bufferMatchIou: 0.3,
  tentativeMatchIou: 0.3,
  lostBufferS: 0.4,
  minHits: 3,
  confirmS: 0.2,
  confirmFirstFrame: true,
  noise: { measure: 0.05, position: 0.27, velocity: 1.03, initialVelocity: 1.9 },
};
