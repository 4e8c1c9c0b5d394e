/** Pure helpers of the console (no DOM): frame lookup by playback time, box geometry, stable colours. */

export interface BBox {
  cx: number;
  cy: number;
  width: number;
  height: number;
}

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * The index of the frame shown at playback time `t` (ms): the greatest `times[i] <= t`, or -1 when every
 * frame is later. `times` is ascending (frames come in frame_time_ms order).
 */
export function frameIndexAt(times: readonly number[], t: number): number {
  let lo = 0;
  let hi = times.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid] <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** A `cxcywh_normalized` box in pixels of a `w`×`h` picture (top-left corner, size). */
export function toRect(b: BBox, w: number, h: number): Rect {
  return {
    x: (b.cx - b.width / 2) * w,
    y: (b.cy - b.height / 2) * h,
    width: b.width * w,
    height: b.height * h,
  };
}

/** FNV-1a hash of a string (32 bits). */
function hash(s: string): number {
  let x = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    x ^= s.charCodeAt(i);
    x = Math.imul(x, 0x01000193) >>> 0;
  }
  return x;
}

/** `#rrggbb` of an HSL colour (h in degrees, s and l in 0..1). */
export function hslToHex(h: number, s: number, l: number): string {
  const k = (n: number) => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
  const hex = (v: number) =>
    Math.round(v * 255)
      .toString(16)
      .padStart(2, '0');
  return `#${hex(f(0))}${hex(f(8))}${hex(f(4))}`;
}

/**
 * A vivid colour that depends only on `id` (a track id or a label), so a track keeps its colour from
 * frame to frame and from one visit to the next.
 */
export function colourOf(id: string): string {
  // Numbered ids (track ids): consecutive numbers get hues far apart (golden angle).
  const n = /(\d+)$/.exec(id);
  const hue = n ? (Number(n[1]) * 137.508 + hash(id.slice(0, n.index))) % 360 : (hash(id) % 24) * 15;
  return hslToHex(Math.round(hue / 5) * 5, 1, 0.5);
}

/** Formats a frame time: PTS offsets as m:ss.mmm, Unix milliseconds (live streams) as local time. */
export function formatFrameTime(ms: number): string {
  if (ms > 1e11) return new Date(ms).toLocaleTimeString();
  const m = Math.floor(ms / 60000);
  const s = ((ms % 60000) / 1000).toFixed(3).padStart(6, '0');
  return `${m}:${s}`;
}
