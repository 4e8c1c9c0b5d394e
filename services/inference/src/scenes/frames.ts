import type { Letterbox } from '../model/letterbox';

/** A decoded video frame already letterboxed (by ffmpeg) to a size x size canvas. */
export interface LetterboxedFrame {
  /** size*size*3 bytes: the G, B and R planes (ffmpeg's gbrp), content at the top-left, padding 114. */
  planes: Buffer;
  letterbox: Letterbox;
  /** Original frame size. */
  width: number;
  height: number;
}

/** Copies the content region of a letterboxed planar canvas out as an interleaved RGB image. Pure. */
export function contentRgb(frame: LetterboxedFrame): Buffer {
  const { width: w, height: h, size } = frame.letterbox;
  const { planes } = frame;
  const plane = size * size;
  const out = Buffer.allocUnsafe(w * h * 3);
  for (let y = 0; y < h; y++) {
    let src = y * size;
    let dst = y * w * 3;
    for (let x = 0; x < w; x++, src++, dst += 3) {
      out[dst] = planes[2 * plane + src];
      out[dst + 1] = planes[src];
      out[dst + 2] = planes[plane + src];
    }
  }
  return out;
}
