import type { LabeledDetection, PixelBox } from '../detection-types';
import { iou } from '../model/nms';
import { assign } from './assignment';
import { correct, initiate, predict, stateToBox, type KalmanState } from './kalman';
import { DEFAULT_TRACKER_OPTIONS, type ByteTrackerOptions } from './tracker-options';

/**
 * A ByteTrack-style multi-object tracker (pure, deterministic), per label:
 * 1. every track's Kalman filter (./kalman) predicts its box at the frame's media time;
 * 2. confirmed tracks (seen in the last frame, or lost for less than `lostBufferS`) are matched to the
 *    high-score detections, optimally (./assignment) on 1 - IoU × score;
 * 3. tracks seen in the last frame and still unmatched are matched to the low-score detections on IoU;
 * 4. confirmed tracks still unmatched are matched to the high-score detections left on buffered IoU: both boxes
 *    widened by `bufferScale` (C-BIoU), which finds again a track that moved further than its prediction;
 * 5. (optional, `recoverIou` > 0) tracks still unmatched are matched to the high-score detections left
 *    by their last observed box (OC-SORT's observation-centric recovery);
 * 6. tentative tracks are matched to the detections left, high and low; a tentative track that misses a
 *    frame is dropped; one seen in `minHits` frames in a row spanning `confirmS` seconds is confirmed, once one of
 *    its detections has at least `newTrackScore` (weaker ones count in its frames but confirm nothing on their own);
 * 7. the detections left start tentative tracks.
 * A track gets its id when confirmed (ids are never reused). `snapshot()` / `restore()`: the state as plain JSON.
 */
export interface TrackedDetection extends LabeledDetection {
  trackId: string;
}

/** One track, as plain JSON. */
export interface TrackRecord {
  /** '' until confirmed. */
  id: string;
  label: string;
  status: 'tentative' | 'tracked' | 'lost';
  kf: KalmanState;
  /** Media time (ms) the filter's state is at. */
  kfTimeMs: number;
  /** The box last observed, [x1, y1, x2, y2], and when (media ms). */
  lastBox: number[];
  seenAtMs: number;
  /** Media time (ms) of its first detection. */
  bornAtMs: number;
  hits: number;
  /**
   * A tentative track none of whose detections reached `newTrackScore` yet: it is not confirmed until one does. Set
   * on every track the tracker makes, never deleted (a deleted property turns each record into a slow dictionary
   * object: a tenth more of the tracking's time); absent in a state taken before it, where it reads as false.
   */
  weak?: boolean;
}

/** The whole state of a tracker, plain JSON (no NaN or Infinity): JSON.parse(JSON.stringify(s)) restores it. */
export interface TrackerState {
  version: 1;
  nextId: number;
  /** Media time (ms) of the last frame tracked, and the time between the two before it (0: not known yet). */
  lastFrameMs?: number;
  frameGapMs?: number;
  tracks: TrackRecord[];
}

type Resolved = typeof DEFAULT_TRACKER_OPTIONS;

const toArray = (b: PixelBox) => [b.x1, b.y1, b.x2, b.y2];
const toBox = (a: readonly number[]): PixelBox => ({ x1: a[0], y1: a[1], x2: a[2], y2: a[3] });
/** The box widened by `k` of its width and height on each side (C-BIoU's buffer). */
const widened = (b: PixelBox, k: number): PixelBox => {
  if (k === 0) return b;
  const [w, h] = [(b.x2 - b.x1) * k, (b.y2 - b.y1) * k];
  return { x1: b.x1 - w, y1: b.y1 - h, x2: b.x2 + w, y2: b.y2 + h };
};
const finiteBox = (b: PixelBox) => [b.x1, b.y1, b.x2, b.y2].every(Number.isFinite);

export class ByteTracker {
  private readonly opts: Resolved;
  private tracks: TrackRecord[] = [];
  private nextId = 1;
  private lastFrameMs: number | undefined;
  private frameGapMs = 0;

  constructor(opts: ByteTrackerOptions = {}) {
    this.opts = {
      ...DEFAULT_TRACKER_OPTIONS,
      ...opts,
      noise: { ...DEFAULT_TRACKER_OPTIONS.noise, ...opts.noise },
    };
  }

  /** A tracker that goes on exactly as the one `state` was taken from (given the same options). */
  static restore(state: TrackerState, opts: ByteTrackerOptions = {}): ByteTracker {
    if (!isTrackerState(state)) throw new Error('not a tracker state (version 1)');
    const t = new ByteTracker(opts);
    t.nextId = state.nextId;
    t.lastFrameMs = state.lastFrameMs;
    t.frameGapMs = state.frameGapMs ?? 0;
    t.tracks = structuredClone(state.tracks);
    return t;
  }

  snapshot(): TrackerState {
    const clock = this.lastFrameMs !== undefined && {
      lastFrameMs: this.lastFrameMs,
      frameGapMs: this.frameGapMs,
    };
    return { version: 1, nextId: this.nextId, tracks: structuredClone(this.tracks), ...clock };
  }

  /** No frame for `ms` beyond the spacing (a job moving between replicas): not ageing the tracks, motion predicted. */
  bridge(ms: number): void {
    if (!(ms > 0) || this.lastFrameMs === undefined) return;
    for (const t of this.tracks) [t.seenAtMs, t.bornAtMs] = [t.seenAtMs + ms, t.bornAtMs + ms];
    this.lastFrameMs += ms;
  }

  /** Live tracks, tentative and lost ones included (for diagnostics and tests). */
  get size(): number {
    return this.tracks.length;
  }

  /**
   * Tracks one frame's detections (pixel boxes) at its media time, in a frame `frameWidth` pixels wide when known
   * (a box at its side has its aspect taken as measured: kalman.ts); returns the detections of confirmed tracks,
   * in the order given, each with its track id. A detection with a non-finite box or score is ignored.
   */
  update(dets: readonly LabeledDetection[], timeMs: number, frameWidth?: number): TrackedDetection[] {
    return this.label(dets, timeMs, frameWidth).filter((d): d is TrackedDetection => d.trackId !== undefined);
  }

  /**
   * Tracks one frame's detections as update() does; returns every detection that may come out (finite, at least
   * `outputMinScore`), in the order given: those of confirmed tracks with their track id, the others (a track not
   * confirmed yet, or none) without one. What a result frame shows: every object detected, an id only where it is
   * confirmed.
   */
  label(
    dets: readonly LabeledDetection[],
    timeMs: number,
    frameWidth?: number,
  ): (LabeledDetection & { trackId?: string })[] {
    const detTrack = this.step(dets, timeMs, frameWidth);
    const out: (LabeledDetection & { trackId?: string })[] = [];
    dets.forEach((d, i) => {
      if (!finiteBox(d.box) || !Number.isFinite(d.score) || d.score < this.opts.outputMinScore) return;
      const t = detTrack[i];
      const { label, score, box } = d;
      out.push(t && t.status !== 'tentative' ? { label, score, box, trackId: t.id } : { label, score, box });
    });
    return out;
  }

  /** One frame's association: the track each detection went to (undefined: none), the tracks updated. */
  private step(
    dets: readonly LabeledDetection[],
    timeMs: number,
    frameWidth?: number,
  ): (TrackRecord | undefined)[] {
    const now = Number.isFinite(timeMs) ? timeMs : Math.max(0, ...this.tracks.map((t) => t.kfTimeMs));
    const o = this.opts;
    // A track not seen for longer than the buffer is gone before this frame's association. The buffer is at least
    // one and a half times the spacing of the two frames before: at 2 fps frames are 0.5 s apart, more than the
    // buffer, and a track seen in the last frame is still looked for in this one; a pause of the source is not. At
    // the second frame the spacing is this one's.
    const sinceLast = this.lastFrameMs === undefined ? 0 : now - this.lastFrameMs;
    const keepMs = Math.max(o.lostBufferS * 1000, 1.5 * (this.frameGapMs || sinceLast));
    // The tracker's first frame: its tracks are confirmed at once, as ByteTrack's (nothing came before them).
    const firstFrame = o.confirmFirstFrame && this.lastFrameMs === undefined;
    if (this.lastFrameMs !== undefined && now > this.lastFrameMs) this.frameGapMs = now - this.lastFrameMs;
    this.lastFrameMs = Math.max(now, this.lastFrameMs ?? now);
    this.tracks = this.tracks.filter((t) => t.status === 'tentative' || now - t.seenAtMs <= keepMs);
    for (const t of this.tracks) {
      t.kf = predict(t.kf, (now - t.kfTimeMs) / 1000, o.noise, t.status !== 'tracked');
      t.kfTimeMs = Math.max(now, t.kfTimeMs);
    }
    const detTrack = new Array<TrackRecord | undefined>(dets.length);
    const born: number[] = [];
    const labels = new Map<string, { tracks: TrackRecord[]; dets: number[] }>();
    const group = (label: string) => {
      let g = labels.get(label);
      if (!g) labels.set(label, (g = { tracks: [], dets: [] }));
      return g;
    };
    for (const t of this.tracks) group(t.label).tracks.push(t);
    dets.forEach((d, i) => {
      if (finiteBox(d.box) && Number.isFinite(d.score) && d.score >= o.lowScore) group(d.label).dets.push(i);
    });
    for (const g of labels.values()) this.associate(g.tracks, g.dets, dets, detTrack, born);

    const matched = new Set<TrackRecord>();
    const confirmedNow: TrackRecord[] = [];
    detTrack.forEach((t, i) => {
      if (!t) return;
      matched.add(t);
      t.kf = correct(t.kf, dets[i].box, o.noise, frameWidth);
      t.lastBox = toArray(dets[i].box);
      t.seenAtMs = now;
      t.hits++;
      if (t.weak && dets[i].score >= o.newTrackScore) t.weak = false;
      if (t.status === 'tentative') {
        if (!t.weak && t.hits >= o.minHits && now - t.bornAtMs >= o.confirmS * 1000) confirmedNow.push(t);
      } else t.status = 'tracked';
    });
    const kept: TrackRecord[] = [];
    for (const t of this.tracks) {
      if (!matched.has(t)) {
        if (t.status === 'tentative' || now - t.seenAtMs > keepMs) continue;
        t.status = 'lost';
      }
      kept.push(t);
    }
    born.sort((a, b) => a - b);
    for (const i of born) {
      const d = dets[i];
      const t: TrackRecord = {
        id: '',
        label: d.label,
        status: 'tentative',
        kf: initiate(d.box, o.noise),
        kfTimeMs: now,
        lastBox: toArray(d.box),
        seenAtMs: now,
        bornAtMs: now,
        hits: 1,
        weak: d.score < o.newTrackScore,
      };
      kept.push(t);
      detTrack[i] = t;
      if (!t.weak && ((o.minHits <= 1 && o.confirmS <= 0) || firstFrame)) confirmedNow.push(t);
    }
    for (const t of confirmedNow) {
      t.status = 'tracked';
      t.id = String(this.nextId++);
    }
    this.tracks = kept;
    return detTrack;
  }

  /** Steps 2 to 7 for one label: fills detTrack and lists the detections that start tracks. */
  private associate(
    tracks: TrackRecord[],
    detIdx: number[],
    dets: readonly LabeledDetection[],
    detTrack: (TrackRecord | undefined)[],
    born: number[],
  ): void {
    const o = this.opts;
    const high = detIdx.filter((i) => dets[i].score >= o.highScore);
    const low = detIdx.filter((i) => dets[i].score < o.highScore);
    const predicted = new Map(tracks.map((t) => [t, stateToBox(t.kf)]));
    const match = (
      ts: TrackRecord[],
      ds: number[],
      boxOf: (t: TrackRecord) => PixelBox,
      minIou: number,
      fuse: boolean,
      widen = 0,
    ) => {
      const dBoxes = ds.map((i) => widened(dets[i].box, widen));
      const cost = ts.map((t) => {
        const b = widened(boxOf(t), widen);
        // Boxes apart cost 1, never admissible; IoU only for those that overlap (most pairs of a busy frame are apart).
        return ds.map((i, k) => {
          const d = dBoxes[k];
          if (d.x1 >= b.x2 || d.x2 <= b.x1 || d.y1 >= b.y2 || d.y2 <= b.y1) return 1;
          return 1 - iou(b, d) * (fuse ? dets[i].score : 1);
        });
      });
      const a = assign(cost, ds.length, 1 - minIou);
      for (const [r, c] of a.pairs) detTrack[ds[c]] = ts[r];
      return { tracks: a.unmatchedRows.map((r) => ts[r]), dets: a.unmatchedCols.map((c) => ds[c]) };
    };
    const byPrediction = (t: TrackRecord) => predicted.get(t) ?? stateToBox(t.kf);
    const confirmed = tracks.filter((t) => t.status !== 'tentative');
    const first = match(confirmed, high, byPrediction, o.matchIou, true);
    const second = match(
      first.tracks.filter((t) => t.status === 'tracked'),
      low,
      byPrediction,
      o.lowMatchIou,
      false,
    );
    let highLeft = first.dets;
    if (o.bufferScale > 0) {
      const unmatched = first.tracks.filter((t) => t.status === 'lost' || second.tracks.includes(t));
      highLeft = match(unmatched, highLeft, byPrediction, o.bufferMatchIou, false, o.bufferScale).dets;
    }
    if (o.recoverIou > 0) {
      const unmatched = first.tracks.filter((t) => t.status === 'lost' || second.tracks.includes(t));
      highLeft = match(unmatched, highLeft, (t) => toBox(t.lastBox), o.recoverIou, false).dets;
    }
    // Tentative tracks, then new ones, from every detection left: a weak one (under newTrackScore) starts or continues
    // a tentative track, which is confirmed only once a detection of it reaches newTrackScore.
    const tentative = tracks.filter((t) => t.status === 'tentative');
    const left = [...highLeft, ...second.dets].sort((a, b) => a - b);
    born.push(...match(tentative, left, byPrediction, o.tentativeMatchIou, true).dets);
  }
}

function isTrackerState(s: unknown): s is TrackerState {
  if (typeof s !== 'object' || s === null) return false;
  const v = s as Partial<TrackerState>;
  return v.version === 1 && Number.isSafeInteger(v.nextId) && Array.isArray(v.tracks);
}
