/**
 * Letterbox geometry and tensor packing for YOLOX-style models (PROVENANCE.md section 1.1):
 * r = min(S/h, S/w), resize to (round(w*r), round(h*r)), paste at the top-left of an S x S canvas
 * filled with 114, BGR, raw 0-255 floats, NCHW. Pure functions: no I/O.
 */

export const LETTERBOX_PAD_VALUE = 114;

export interface Letterbox {
  /** Scale from original pixels to letterboxed pixels. */
  r: number;
  /** Size of the resized image inside the canvas. */
  width: number;
  height: number;
  /** Canvas side. */
  size: number;
}

export function letterboxFor(origWidth: number, origHeight: number, size: number): Letterbox {
  if (!(origWidth > 0 && origHeight > 0)) throw new RangeError('image dimensions must be positive');
  const r = Math.min(size / origHeight, size / origWidth);
  return {
    r,
    width: Math.min(size, Math.max(1, Math.round(origWidth * r))),
    height: Math.min(size, Math.max(1, Math.round(origHeight * r))),
    size,
  };
}

/**
 * Packs an interleaved image of `width` x `height` pixels (3 channels, order given by `order`) into
 * a 1 x 3 x size x size float32 NCHW tensor in BGR order, at the top-left of a canvas of 114.
 * `width`/`height` may be smaller than `size` (resized content) or equal (an already letterboxed frame).
 */
export function packBgrTensor(
  pixels: Uint8Array,
  width: number,
  height: number,
  size: number,
  order: 'rgb' | 'bgr',
  out: Float32Array = new Float32Array(3 * size * size),
): Float32Array {
  if (width > size || height > size) throw new RangeError('image larger than the model input');
  if (pixels.length < width * height * 3) throw new RangeError('pixel buffer too short');
  const plane = size * size;
  // BGR planes: plane 0 = B, 1 = G, 2 = R.
  const bOff = order === 'bgr' ? 0 : 2;
  const rOff = order === 'bgr' ? 2 : 0;
  if (width === size && height === size) {
    // A whole canvas (letterboxed by sharp): one pass, no padding to write.
    for (let i = 0, src = 0; i < plane; i++, src += 3) {
      out[i] = pixels[src + bOff];
      out[plane + i] = pixels[src + 1];
      out[2 * plane + i] = pixels[src + rOff];
    }
    return out;
  }
  out.fill(LETTERBOX_PAD_VALUE);
  for (let y = 0; y < height; y++) {
    let src = y * width * 3;
    let dst = y * size;
    for (let x = 0; x < width; x++, src += 3, dst++) {
      out[dst] = pixels[src + bOff];
      out[plane + dst] = pixels[src + 1];
      out[2 * plane + dst] = pixels[src + rOff];
    }
  }
  return out;
}

/**
 * Packs a whole size x size canvas of G, B and R planes (ffmpeg's gbrp, `planes`) into a 1 x 3 x size x
 * size float32 NCHW tensor in BGR order: three typed-array copies, each converting bytes to floats.
 */
export function packGbrpTensor(
  planes: Uint8Array,
  size: number,
  out: Float32Array = new Float32Array(3 * size * size),
): Float32Array {
  const plane = size * size;
  if (planes.length < 3 * plane) throw new RangeError('plane buffer too short');
  out.set(planes.subarray(plane, 2 * plane), 0); // B
  out.set(planes.subarray(0, plane), plane); // G
  out.set(planes.subarray(2 * plane, 3 * plane), 2 * plane); // R
  return out;
}
