import type { Letterbox } from '../model/letterbox';

/** A decoded video frame already letterboxed (by ffmpeg) to a size x size BGR canvas. */
export interface LetterboxedFrame {
  /** size*size*3 bytes, BGR interleaved, content at the top-left, padding 114. */
  bgr: Buffer;
  letterbox: Letterbox;
  /** Original frame size. */
  width: number;
  height: number;
}

/** Copies the content region of a letterboxed BGR canvas out as an RGB image. Pure. */
export function contentRgb(frame: LetterboxedFrame): Buffer {
  const { width: w, height: h, size } = frame.letterbox;
  const out = Buffer.allocUnsafe(w * h * 3);
  for (let y = 0; y < h; y++) {
    let src = y * size * 3;
    let dst = y * w * 3;
    for (let x = 0; x < w; x++, src += 3, dst += 3) {
      out[dst] = frame.bgr[src + 2];
      out[dst + 1] = frame.bgr[src + 1];
      out[dst + 2] = frame.bgr[src];
    }
  }
  return out;
}
