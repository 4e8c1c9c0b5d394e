import { imageDistance, type FrameSize, type Point, type ZoneRule } from '@vision/shared';
import type { FrameView, TrackedObservation } from './frame-input';
import type { TrackState } from './zone-track';

/** A tracked observation of a frame whose track id has no state in the zone. */
export interface Fresh {
  /** Its position in the frame's view. */
  at: number;
  obs: TrackedObservation;
  /** Normalized. */
  anchor: Point;
  inside: boolean;
}

/**
 * Id switch (zone-visits.ts): the open visits of missing tracks (not in `view`, last seen <= lost_grace_ms ago)
 * that track ids new to the zone, whose anchors are inside, take over (no event). A pair needs the same label and
 * the new anchor within switch_distance of the missing track's last one on the image (imageDistance: units of the
 * frame's longer side); pairs are taken nearest first (then the latest seen, then by ids), each new id and each
 * visit once. Returns the pairs in the order they apply.
 */
export function switchPairs(
  rule: ZoneRule,
  tracks: ReadonlyMap<string, TrackState>,
  fresh: readonly Fresh[],
  view: FrameView,
  t: number,
  size: FrameSize,
): { f: Fresh; old: string }[] {
  if (!fresh.some((f) => f.inside)) return [];
  const seen = view.ids;
  const missing = [...tracks.entries()].filter(
    ([id, s]) => !seen.has(id) && s.visit !== null && t - s.last_seen_ms <= rule.lost_grace_ms,
  );
  if (missing.length === 0) return [];
  const pairs: { d: number; last: number; fresh: string; old: string; f: Fresh }[] = [];
  for (const f of fresh) {
    if (!f.inside) continue;
    for (const [id, s] of missing) {
      const d = imageDistance(f.anchor[0], f.anchor[1], s.last_anchor[0], s.last_anchor[1], size);
      if (s.visit?.label === f.obs.label && d <= rule.switch_distance)
        pairs.push({ d, last: s.last_seen_ms, fresh: f.obs.track, old: id, f });
    }
  }
  pairs.sort((a, b) => a.d - b.d || b.last - a.last || cmp(a.fresh, b.fresh) || cmp(a.old, b.old));
  const taken = new Set<string>();
  const claimed = new Set<string>();
  const out: { f: Fresh; old: string }[] = [];
  for (const p of pairs) {
    if (taken.has(p.old) || claimed.has(p.fresh)) continue;
    taken.add(p.old);
    claimed.add(p.fresh);
    out.push({ f: p.f, old: p.old });
  }
  return out;
}

export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
