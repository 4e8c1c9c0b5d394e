import type { StoredFrame } from '../frames';
import type { AnalyticsFrame } from './engine';
import { cxcywhToBox } from '@vision/shared';

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
