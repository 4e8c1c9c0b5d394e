import type { StoredFrame } from '../frames';
import type { AnalyticsFrame } from './engine';
import type { Box } from '@vision/shared';

/** A box stored as [cx, cy, w, h] (normalized) as [x1, y1, x2, y2], clamped to [0, 1]. */
export function cxcywhToBox(cx: number, cy: number, w: number, h: number): Box {
  const clamp = (v: number): number => Math.min(1, Math.max(0, v));
  return [clamp(cx - w / 2), clamp(cy - h / 2), clamp(cx + w / 2), clamp(cy + h / 2)];
}

/** The engine's view of a stored result frame (frames.ts). */
export function analyticsFrameOf(frame: StoredFrame): AnalyticsFrame {
  return {
    seq: frame.seq,
    time_ms: frame.frameTimeMs,
    objects: frame.objects.map((o) => ({
      label: o.l,
      score: o.s,
      box: cxcywhToBox(o.b[0], o.b[1], o.b[2], o.b[3]),
      ...(o.t !== undefined ? { track_id: o.t } : {}),
    })),
  };
}
