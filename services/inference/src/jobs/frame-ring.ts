/**
 * A job's ring of recent frames, for the pictures of the events results decides after them (docs/ANALYTICS.md,
 * "Evidence"): the last `capacity` published frames, each the picture as decoded for detection (the letterboxed
 * content, no padding) as three planes, found by seq. Off until armed (results arms it for a task with zones or
 * lines): a job without rules copies nothing. Buffers of frames that leave the ring are reused.
 */
import type { SourceFrame } from './frame-source';
import { letterboxFor } from '../model/letterbox';

/** A frame held for the ring: the content's G, B and R planes, each width x height. */
export interface HeldFrame {
  planes: Buffer;
  width: number;
  height: number;
}

export interface RingFrame extends HeldFrame {
  seq: number;
  timeMs: number;
}

export class FrameRing {
  private armed = false;
  private readonly frames: RingFrame[] = [];
  private readonly spare: Buffer[] = [];

  constructor(
    /** Frames kept; 0 keeps none. */
    readonly capacity: number,
    /** The letterbox canvas side (the engine's input size). */
    readonly size: number,
  ) {}

  /** From now on, frames are kept. */
  arm(): void {
    if (this.capacity > 0) this.armed = true;
  }

  get isArmed(): boolean {
    return this.armed;
  }

  /** Bytes the ring holds now (its frames and spare buffers). */
  get bytes(): number {
    let n = 0;
    for (const f of this.frames) n += f.planes.length;
    for (const b of this.spare) n += b.length;
    return n;
  }

  /** Copies a decoded frame's content before its planes are reused; undefined while the ring is off. */
  hold(f: SourceFrame): HeldFrame | undefined {
    if (!this.armed) return undefined;
    const { width, height } = letterboxFor(f.width, f.height, this.size);
    return frameContent(f, this.size, this.takeBuffer(width * height * 3));
  }

  /** Keeps a held frame under its published seq; the oldest leaves when the ring is full. */
  put(seq: number, timeMs: number, held: HeldFrame): void {
    if (!this.armed) return this.release(held);
    this.frames.push({ ...held, seq, timeMs });
    while (this.frames.length > this.capacity) this.release(this.frames.shift()!);
  }

  /** A held frame that will not be published. */
  release(held: HeldFrame): void {
    if (this.spare.length < 2) this.spare.push(held.planes);
  }

  /** The frame of `seq`, while it is in the ring. */
  get(seq: number): RingFrame | undefined {
    for (let i = this.frames.length - 1; i >= 0; i--) if (this.frames[i].seq === seq) return this.frames[i];
    return undefined;
  }

  /** Lets every frame go and turns the ring off (the job ended some time ago). */
  clear(): void {
    this.frames.length = 0;
    this.spare.length = 0;
    this.armed = false;
  }

  private takeBuffer(need: number): Buffer {
    const i = this.spare.findIndex((b) => b.length === need);
    if (i >= 0) return this.spare.splice(i, 1)[0];
    return Buffer.allocUnsafe(need);
  }
}

/**
 * The content of a decoded frame (the letterbox of side `size` without its padding) as G, B and R planes, copied
 * into `planes` (width * height * 3 bytes; a new buffer when absent).
 */
export function frameContent(f: SourceFrame, size: number, planes?: Buffer): HeldFrame {
  const { width, height } = letterboxFor(f.width, f.height, size);
  const out = planes ?? Buffer.allocUnsafe(width * height * 3);
  const plane = size * size;
  for (let c = 0, o = 0; c < 3; c++) {
    const base = c * plane;
    if (width === size) {
      f.planes.copy(out, o, base, base + width * height);
      o += width * height;
      continue;
    }
    for (let y = 0; y < height; y++, o += width) {
      const row = base + y * size;
      f.planes.copy(out, o, row, row + width);
    }
  }
  return { planes: out, width, height };
}
