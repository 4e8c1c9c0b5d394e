import type { LabeledDetection, PixelBox } from '../detection-types';
import { iou } from '../model/nms';

/**
 * A SORT-style multi-object tracker (pure): per label, greedy IoU matching between detections and
 * each track's predicted box (last box moved by its smoothed velocity). A new track gets its id at
 * birth; a track that has not yet been seen `minHits` times is dropped on its first miss; a
 * confirmed track survives up to `maxAge` consecutive missed frames.
 */
export interface TrackerOptions {
  iouThreshold?: number;
  maxAge?: number;
  minHits?: number;
  /** Weight of the newest displacement in the velocity estimate (exponential smoothing). */
  velocityAlpha?: number;
}

export interface TrackedDetection extends LabeledDetection {
  trackId: string;
}

interface Track {
  id: string;
  label: string;
  box: PixelBox;
  vx: number;
  vy: number;
  hits: number;
  misses: number;
}

function shift(b: PixelBox, dx: number, dy: number): PixelBox {
  return { x1: b.x1 + dx, y1: b.y1 + dy, x2: b.x2 + dx, y2: b.y2 + dy };
}

export class SortTracker {
  private readonly iouThreshold: number;
  private readonly maxAge: number;
  private readonly minHits: number;
  private readonly alpha: number;
  private tracks: Track[] = [];
  private nextId = 1;

  constructor(opts: TrackerOptions = {}) {
    this.iouThreshold = opts.iouThreshold ?? 0.3;
    this.maxAge = opts.maxAge ?? 10;
    this.minHits = opts.minHits ?? 2;
    this.alpha = opts.velocityAlpha ?? 0.5;
  }

  /** Live tracks (for diagnostics and tests). */
  get size(): number {
    return this.tracks.length;
  }

  update(dets: readonly LabeledDetection[]): TrackedDetection[] {
    const predicted = this.tracks.map((t) => shift(t.box, t.vx, t.vy));
    const pairs: { t: number; d: number; iou: number }[] = [];
    for (let t = 0; t < this.tracks.length; t++) {
      for (let d = 0; d < dets.length; d++) {
        if (this.tracks[t].label !== dets[d].label) continue;
        const v = iou(predicted[t], dets[d].box);
        if (v >= this.iouThreshold) pairs.push({ t, d, iou: v });
      }
    }
    pairs.sort((a, b) => b.iou - a.iou);
    const trackTaken = new Uint8Array(this.tracks.length);
    const detTrack = new Array<number>(dets.length).fill(-1);
    for (const p of pairs) {
      if (trackTaken[p.t] || detTrack[p.d] !== -1) continue;
      trackTaken[p.t] = 1;
      detTrack[p.d] = p.t;
    }

    const out: TrackedDetection[] = [];
    const born: Track[] = [];
    for (let d = 0; d < dets.length; d++) {
      const det = dets[d];
      const ti = detTrack[d];
      if (ti >= 0) {
        const tr = this.tracks[ti];
        const dx = (det.box.x1 + det.box.x2 - tr.box.x1 - tr.box.x2) / 2;
        const dy = (det.box.y1 + det.box.y2 - tr.box.y1 - tr.box.y2) / 2;
        tr.vx = this.alpha * dx + (1 - this.alpha) * tr.vx;
        tr.vy = this.alpha * dy + (1 - this.alpha) * tr.vy;
        tr.box = det.box;
        tr.hits++;
        tr.misses = 0;
        out.push({ ...det, trackId: tr.id });
      } else {
        const tr: Track = {
          id: String(this.nextId++),
          label: det.label,
          box: det.box,
          vx: 0,
          vy: 0,
          hits: 1,
          misses: 0,
        };
        born.push(tr);
        out.push({ ...det, trackId: tr.id });
      }
    }
    const survivors: Track[] = [];
    for (let t = 0; t < this.tracks.length; t++) {
      const tr = this.tracks[t];
      if (!trackTaken[t]) {
        tr.misses++;
        if (tr.hits < this.minHits || tr.misses > this.maxAge) continue;
      }
      survivors.push(tr);
    }
    this.tracks = [...survivors, ...born];
    return out;
  }
}
