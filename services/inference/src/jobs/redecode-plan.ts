/**
 * Where a file job's frame is found again in its upload (docs/EVIDENCE.md). The decoder's fps filter
 * gives each output slot k (media time k / fps) the last input frame whose time rounds to k or before; a decoder
 * started at a seek point S (`-ss S` before the input) gives every frame its time less S. When S * fps is a whole
 * number of slots and S is a whole number of seconds (exact in every stream's time base), the re-decode's slot
 * k - S * fps holds the same input frame, scaled the same way: the same bytes as the job's own decode. S stays at
 * least `marginMs` before the slot, so that a slot's input frame that is older than the slot is decoded too.
 */

/** A job's first published frame: the seq and the media time every later seq counts from. */
export interface FirstFrame {
  seq: number;
  timeMs: number;
}

/** The fps filter's output slot of the job's frame `seq` (a file job's frames fill consecutive slots). */
export function slotOfSeq(seq: number, first: FirstFrame, fps: number): number {
  return Math.round((first.timeMs * fps) / 1000) + (seq - first.seq);
}

const whole = (v: number) => Math.abs(v - Math.round(v)) < 1e-6;

/** The latest seek point for `slot`: whole seconds, a whole number of slots, `marginMs` or more before it. */
export function seekSeconds(slot: number, fps: number, marginMs: number): number {
  for (let s = Math.floor(slot / fps - marginMs / 1000); s > 0; s--) if (whole(s * fps)) return s;
  return 0;
}

/** The slot of a frame a decoder started at `seekS` gave at `ptsMs` (its showinfo time). */
export function slotAt(ptsMs: number, seekS: number, fps: number): number {
  return Math.round((ptsMs * fps) / 1000) + Math.round(seekS * fps);
}

/** One decoder run: from `seekS`, until slot `last` (at most `frames` frames out). */
export interface RedecodeRun {
  seekS: number;
  slots: number[];
  frames: number;
}

/**
 * The decoder runs that give `slots` (of one job): one run per group of slots no more than `maxSpan` apart from the
 * group's first, each seeking once.
 */
export function redecodeRuns(
  slots: readonly number[],
  fps: number,
  marginMs: number,
  maxSpan: number,
): RedecodeRun[] {
  const sorted = [...new Set(slots)].filter((s) => s >= 0).sort((a, b) => a - b);
  const runs: RedecodeRun[] = [];
  for (const slot of sorted) {
    const cur = runs[runs.length - 1];
    if (cur && slot - cur.slots[0] <= maxSpan) {
      cur.slots.push(slot);
      continue;
    }
    runs.push({ seekS: seekSeconds(slot, fps, marginMs), slots: [slot], frames: 0 });
  }
  for (const r of runs) r.frames = r.slots[r.slots.length - 1] - Math.round(r.seekS * fps) + 1;
  return runs;
}

/** Where a file job goes on at frame `nextSeq` on another replica: the seek point, and the slot of that frame. */
export function resumePoint(
  nextSeq: number,
  first: FirstFrame,
  fps: number,
  marginMs: number,
): { seekS: number; slot: number } {
  const slot = slotOfSeq(nextSeq, first, fps);
  return { seekS: seekSeconds(slot, fps, marginMs), slot };
}

/** Where a file job taken over goes on: the decoder's seek point, the slot of its next frame, the sampling rate. */
export interface FileResume {
  seekS: number;
  slot: number;
  fps: number;
}

/**
 * A frame of a resumed file's decoder with the time an uninterrupted run gives it (showinfo prints 6 digits);
 * undefined for a frame before the one the job goes on at.
 */
export function resumedFrame<F extends { ptsMs: number }>(f: F, r: FileResume): F | undefined {
  const slot = slotAt(f.ptsMs, r.seekS, r.fps);
  if (slot < r.slot) return undefined;
  return { ...f, ptsMs: Math.round(Number((slot / r.fps).toPrecision(6)) * 1000) };
}
