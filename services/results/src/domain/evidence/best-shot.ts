/**
 * Which frame of a track is its best shot (docs/EVIDENCE.md, "Best shot per track"). A box is measured in pixels
 * at the size frames are detected at, the size its picture has. A box that passes the size rule is preferred; a
 * track none of whose boxes passes still gets its best-scoring box, one cut by the frame's edge last, and its
 * picture says which rule it met. Pure.
 */
import type { StoredFrame, StoredObject } from '../frames';

export type Box = [number, number, number, number];

/** What a best shot's box met: the size rule, or only the fallback (too small, or touching the frame's edge). */
export type BestShotRule = 'met' | 'too_small' | 'at_edge';

const BEST_SHOT_RULES: readonly BestShotRule[] = ['met', 'too_small', 'at_edge'];

export const isBestShotRule = (v: unknown): v is BestShotRule =>
  typeof v === 'string' && (BEST_SHOT_RULES as readonly string[]).includes(v);

/** The size rule, in pixels at the detection size, and how much better a frame must score to replace the kept one. */
export const BEST_SHOT = {
  /** The models' input: a frame is detected (and pictured) with its longer side at this many pixels. */
  detectionSize: 416,
  /** The box's shorter side is at least this long... */
  minShortSidePx: 8,
  /** ...and its longer side at least this long (a standing person or a car side on, either way)... */
  minLongSidePx: 16,
  /** ...and keeps this far from every edge of the frame. */
  edgeMarginPx: 2,
  /** A frame replaces the kept one of the same rule when its score is higher by at least this much. */
  minGain: 0.05,
} as const;

const clamp01 = (v: number) => Math.min(1, Math.max(0, v));

/** A stored object's box as [x1, y1, x2, y2], normalized and inside the frame. */
export function boxOf(o: StoredObject): Box {
  const [cx, cy, w, h] = o.b;
  return [clamp01(cx - w / 2), clamp01(cy - h / 2), clamp01(cx + w / 2), clamp01(cy + h / 2)];
}

/** The frame's size at detection: its longer side at BEST_SHOT.detectionSize, its aspect ratio kept. */
export function detectionSizeOf(image: { width: number; height: number }): { width: number; height: number } {
  const S = BEST_SHOT.detectionSize;
  if (!(image.width > 0 && image.height > 0)) return { width: S, height: S };
  const r = Math.min(S / image.width, S / image.height);
  return {
    width: Math.max(1, Math.round(image.width * r)),
    height: Math.max(1, Math.round(image.height * r)),
  };
}

/** Which rule a box of a frame of `image`'s size meets: whole and large enough, else why not. */
export function sizeRuleOf(o: StoredObject, image: { width: number; height: number }): BestShotRule {
  const { width: W, height: H } = detectionSizeOf(image);
  const [x1, y1, x2, y2] = boxOf(o);
  const m = BEST_SHOT.edgeMarginPx;
  // 1e-6 px: the rounding of normalized coordinates does not decide.
  const e = 1e-6;
  if (x1 * W < m - e || y1 * H < m - e || x2 * W > W - m + e || y2 * H > H - m + e) return 'at_edge';
  const [w, h] = [(x2 - x1) * W, (y2 - y1) * H];
  if (Math.min(w, h) < BEST_SHOT.minShortSidePx - e || Math.max(w, h) < BEST_SHOT.minLongSidePx - e)
    return 'too_small';
  return 'met';
}

const RANK: Record<BestShotRule, number> = { met: 2, too_small: 1, at_edge: 0 };

/** A candidate or kept best shot: its detection score and the rule its box met. */
export interface Shot {
  score: number;
  rule: BestShotRule;
}

/** Whether `a` is a better shot than `b`: a better rule, else a higher score (no gain asked). */
function better(a: Shot, b: Shot): boolean {
  return RANK[a.rule] !== RANK[b.rule] ? RANK[a.rule] > RANK[b.rule] : a.score > b.score;
}

/**
 * Whether a candidate replaces the track's kept picture: always when none is kept; when a better rule is met;
 * under the same rule when its score is higher by BEST_SHOT.minGain. A track is therefore pictured at most about
 * 1 / minGain times per rule over its life.
 */
export function replacesKept(c: Shot, kept: Shot | undefined): boolean {
  if (!kept) return true;
  if (RANK[c.rule] !== RANK[kept.rule]) return RANK[c.rule] > RANK[kept.rule];
  return c.score >= kept.score + BEST_SHOT.minGain - 1e-9;
}

/** A track's best candidate in some frames. */
export interface Candidate extends Shot {
  trackId: string;
  seq: number;
  box: Box;
}

/**
 * Per track of `frames`, its best box (the best rule, then the highest score, the earliest of equal ones) that
 * replaces the kept picture (`kept`, by track id; a track without a stored picture has none), in order of seq
 * then track id: at most one per track.
 */
export function bestShotCandidates(
  frames: readonly StoredFrame[],
  kept: ReadonlyMap<string, Shot>,
): Candidate[] {
  const best = new Map<string, Candidate>();
  for (const f of frames) {
    const seen = new Set<string>();
    for (const o of f.objects) {
      // The engine uses a track's first object in a frame too.
      if (o.t === undefined || seen.has(o.t)) continue;
      seen.add(o.t);
      const c: Candidate = { trackId: o.t, seq: f.seq, box: boxOf(o), score: o.s, rule: sizeRuleOf(o, f) };
      const prev = best.get(o.t);
      if (!prev || better(c, prev)) best.set(o.t, c);
    }
  }
  return [...best.values()]
    .filter((c) => replacesKept(c, kept.get(c.trackId)))
    .sort((a, b) => a.seq - b.seq || (a.trackId < b.trackId ? -1 : a.trackId > b.trackId ? 1 : 0));
}
