/**
 * The latest picture of a running job, for drawing zones and lines on it (docs/API.md, "Zones, lines
 * and their events"): a copy of a decoded frame's letterboxed planes, taken at most once per `everyMs` of wall clock,
 * and encoded to JPEG only when asked (once per kept frame). Nothing is encoded or kept on disk otherwise.
 */
import sharp from 'sharp';
import { letterboxFor } from '../model/letterbox';
import type { SourceFrame } from './frame-source';

export interface Still {
  jpeg: Buffer;
  /** The picture's size: the frame as decoded for detection (the stream's aspect ratio). */
  width: number;
  height: number;
  /** The stream's own frame size. */
  source_width: number;
  source_height: number;
  /** Media time of the frame (ms), and when it came out of the decoder (Unix ms). */
  frame_time_ms: number;
  captured_at_ms: number;
}

interface Kept {
  planes: Buffer;
  width: number;
  height: number;
  timeMs: number;
  capturedAt: number;
}

/**
 * How inference encodes every JPEG of a job's frames (the still, the pictures of events and best shots): quality 80,
 * with libjpeg's standard Huffman tables. Optimised tables (sharp's default) save about 2 % of the bytes for a second
 * pass over the coefficients (docs/PERFORMANCE.md, "Evidence", has the figures).
 */
export const JPEG_OPTIONS = { quality: 80, optimiseCoding: false } as const;

/** G, B, R planes of a size x size canvas -> interleaved RGB of its top-left width x height. */
export function rgbOfPlanes(planes: Buffer, size: number, width: number, height: number): Buffer {
  return interleaveGbr(planes, size * size, size, width, height);
}

/**
 * G, B, R planes of `plane` bytes each, rows `stride` bytes apart -> interleaved RGB of their top-left width x
 * height (a letterbox canvas: stride and plane of the canvas; a frame's content alone: stride width).
 */
export function interleaveGbr(
  planes: Buffer,
  plane: number,
  stride: number,
  width: number,
  height: number,
): Buffer {
  const out = Buffer.allocUnsafe(width * height * 3);
  for (let y = 0, o = 0; y < height; y++) {
    const row = y * stride;
    for (let x = 0; x < width; x++, o += 3) {
      const i = row + x;
      out[o] = planes[2 * plane + i];
      out[o + 1] = planes[i];
      out[o + 2] = planes[plane + i];
    }
  }
  return out;
}

export class LatestStill {
  private kept?: Kept;
  private encoded?: Promise<Still>;

  constructor(
    /** The letterbox canvas side (the engine's input size). */
    private readonly size: number,
    private readonly everyMs = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Called with each decoded frame before its planes are reused: keeps a copy now and then. */
  offer(f: SourceFrame, timeMs: number): void {
    const at = this.now();
    if (this.kept && at - this.kept.capturedAt < this.everyMs) return;
    // One buffer, reused: an encode reads it synchronously (rgbOfPlanes) before its first await.
    const planes =
      this.kept?.planes.length === f.planes.length ? this.kept.planes : Buffer.allocUnsafe(f.planes.length);
    f.planes.copy(planes);
    this.kept = { planes, width: f.width, height: f.height, timeMs, capturedAt: at };
    this.encoded = undefined;
  }

  /** The kept frame as JPEG; undefined before any frame was decoded. */
  still(): Promise<Still> | undefined {
    const k = this.kept;
    if (!k) return undefined;
    const lb = letterboxFor(k.width, k.height, this.size);
    this.encoded ??= (async (rgb: Buffer) => {
      const jpeg = await sharp(rgb, { raw: { width: lb.width, height: lb.height, channels: 3 } })
        .jpeg(JPEG_OPTIONS)
        .toBuffer();
      return {
        jpeg,
        width: lb.width,
        height: lb.height,
        source_width: k.width,
        source_height: k.height,
        frame_time_ms: k.timeMs,
        captured_at_ms: k.capturedAt,
      };
    })(rgbOfPlanes(k.planes, this.size, lb.width, lb.height));
    return this.encoded;
  }
}
