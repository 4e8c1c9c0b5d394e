import type { StoredFrame } from '../frames';
import {
  anchorX,
  anchorY,
  cxcywhToBox,
  hasPixels,
  inPixels,
  type Anchor,
  type Box,
  type FrameSize,
} from '@vision/shared';

/** One object of a result frame, as the engine reads it. */
export interface AnalyticsObject {
  label: string;
  score: number;
  /** Normalized [x1, y1, x2, y2], y down. */
  box: Box;
  track_id?: string;
}

export interface AnalyticsFrame {
  seq: number;
  time_ms: number;
  /** The frame's size in pixels: what the normalized boxes and rules are fractions of. */
  width: number;
  height: number;
  objects: readonly AnalyticsObject[];
}

/** The engine's view of a stored result frame (frames.ts): its size in pixels and its objects. */
export function analyticsFrameOf(frame: StoredFrame): AnalyticsFrame {
  return {
    seq: frame.seq,
    time_ms: frame.frameTimeMs,
    width: frame.width,
    height: frame.height,
    objects: frame.objects.map((o) => ({
      label: o.l,
      score: o.s,
      box: cxcywhToBox(o.b[0], o.b[1], o.b[2], o.b[3]),
      ...(o.t !== undefined ? { track_id: o.t } : {}),
    })),
  };
}

/**
 * Where an engine decides its rules (docs/ANALYTICS.md, "On the image"):
 * - 'pixels': on each frame's pixels. Boxes and rules are scaled by the frame's width and height; a frame
 *   without pixels (a side not above 0) has no watched objects.
 * - 'normalized': on normalized coordinates, as if every frame were 1 x 1 pixel: what evaluations stored
 *   before 'pixels' existed decided, kept so that their replays give their stored events.
 */
export type EngineGeometry = 'pixels' | 'normalized';

const UNIT: FrameSize = { width: 1, height: 1 };

// Bound once: a call through the package's re-exports reads a getter each time, and these run per object.
const anchorOnX = anchorX;
const anchorOnY = anchorY;
const toPixels = inPixels;

/**
 * The frame's size as the rules see it and its candidate objects, in frame order: each track id's first object
 * and every object without a track id, with its box in those pixels.
 */
export function frameCandidates(
  frame: AnalyticsFrame,
  geometry: EngineGeometry,
): { size: FrameSize; candidates: (Watched & { score: number })[] } {
  const legacy = geometry === 'normalized';
  const size = legacy ? UNIT : { width: frame.width, height: frame.height };
  const candidates: (Watched & { score: number })[] = [];
  if (!legacy && !hasPixels(size)) return { size, candidates };
  const firstOfTrack = new Set<string>();
  for (let index = 0; index < frame.objects.length; index++) {
    const o = frame.objects[index];
    if (o.track_id !== undefined) {
      if (firstOfTrack.has(o.track_id)) continue;
      firstOfTrack.add(o.track_id);
    }
    const px = legacy ? o.box : toPixels(o.box, size);
    candidates.push({ index, track: o.track_id, label: o.label, box: o.box, px, score: o.score });
  }
  return { size, candidates };
}

/**
 * One watched object of a frame, as a rule sees it (`track` absent: an object without a track id): `box`
 * normalized, `px` the same box in the frame's pixels.
 */
export interface Watched {
  index: number;
  track?: string;
  label: string;
  box: Box;
  px: Box;
}

/** One watched, tracked object of a frame. */
export type TrackedObservation = Watched & { track: string };

/**
 * What the rules with one filter (labels, min_score) and one anchor see of a frame: built once per frame and
 * filter.
 */
export class FrameView {
  readonly watched: Watched[] = [];
  /** The watched objects with a track id. */
  readonly tracked: TrackedObservation[] = [];
  /** The anchor of each of `tracked`, in the frame's pixels (room for every candidate). */
  readonly ax: Float64Array;
  readonly ay: Float64Array;
  private trackIds?: Set<string>;

  constructor(candidates: number) {
    this.ax = new Float64Array(candidates);
    this.ay = new Float64Array(candidates);
  }

  /** The ids of `tracked` (made when first asked: most frames need none). */
  get ids(): ReadonlySet<string> {
    return (this.trackIds ??= new Set(this.tracked.map((o) => o.track)));
  }
}

/** The objects of a frame a rule watches (labels absent or empty: every label), with their anchors. */
export function viewOf(
  candidates: readonly (Watched & { score: number })[],
  rule: { labels?: string[]; min_score: number; anchor: Anchor },
): FrameView {
  const labels = rule.labels && rule.labels.length > 0 ? new Set(rule.labels) : null;
  const view = new FrameView(candidates.length);
  for (const c of candidates) {
    if (c.score < rule.min_score || (labels && !labels.has(c.label))) continue;
    view.watched.push(c);
    if (c.track !== undefined) {
      view.ax[view.tracked.length] = anchorOnX(c.px, rule.anchor);
      view.ay[view.tracked.length] = anchorOnY(c.px, rule.anchor);
      view.tracked.push(c as TrackedObservation);
    }
  }
  return view;
}

/** The ids of the zones each object of a frame is counted in, by the object's index (absent: none). */
export type ZoneMarks = (string[] | undefined)[];

/** Counts object `index` in zone `zoneId` (each list made at its first zone, to its size). */
export function markZone(marks: ZoneMarks, index: number, zoneId: string): void {
  const zones = marks[index];
  if (zones) zones.push(zoneId);
  else marks[index] = [zoneId];
}

const filterKeys = new WeakMap<object, string>();

/** Rules with equal keys see the same view of a frame (cached per rule object). */
export function filterKey(rule: { labels?: string[]; min_score: number; anchor: Anchor }): string {
  let key = filterKeys.get(rule);
  if (key === undefined) {
    key = JSON.stringify([rule.min_score, [...new Set(rule.labels ?? [])].sort(), rule.anchor]);
    filterKeys.set(rule, key);
  }
  return key;
}

/**
 * A rule's track states by the track's position in its view of the previous frame. Consecutive frames mostly list
 * their tracks in the same order, so a look at the same position spares most lookups in the rule's map. Exact:
 * each entry is what the map held for that id once the previous frame was stepped, and only steps change the
 * map. A step asks for every position of its frame (`get`), records the states it makes or moves (`keep`), and
 * ends with `endFrame`.
 */
export class RecentStates<S> {
  private readonly ids: string[] = [];
  private readonly states: (S | undefined)[] = [];

  constructor(private readonly map: ReadonlyMap<string, S>) {}

  /** The state of track `id`, at position `at` of this frame's view. */
  get(at: number, id: string): S | undefined {
    if (this.ids[at] === id) return this.states[at];
    const state = this.map.get(id);
    this.keep(at, id, state);
    return state;
  }

  /** The state of track `id`, at position `at`, once this frame is stepped (undefined: none). */
  keep(at: number, id: string, state: S | undefined): void {
    this.ids[at] = id;
    this.states[at] = state;
  }

  /** Ends a frame of `count` tracked objects, all kept. */
  endFrame(count: number): void {
    if (this.ids.length === count) return;
    this.ids.length = count;
    this.states.length = count;
  }

  /** Forgets every position (the map was changed outside a step). */
  clear(): void {
    this.endFrame(0);
  }
}
