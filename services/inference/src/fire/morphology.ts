/**
 * Binary morphology with a square (2r+1)x(2r+1) structuring element, done separably (a row pass then
 * a column pass), so each call is O(pixels * r). Pixels outside the mask count as background.
 */
import type { Mask } from './raster';

// Math functions bound once per module: looking globals up inside hot pixel loops is slow when the
// code runs in a vm context (as under jest).
const { max: mMax, min: mMin } = Math;

function pass(
  src: Uint8Array,
  w: number,
  h: number,
  r: number,
  horizontal: boolean,
  dilate: boolean,
): Uint8Array {
  const out = new Uint8Array(w * h);
  const outer = horizontal ? h : w;
  const inner = horizontal ? w : h;
  const stride = horizontal ? 1 : w;
  for (let o = 0; o < outer; o++) {
    const base = horizontal ? o * w : o;
    for (let i = 0; i < inner; i++) {
      const lo = mMax(0, i - r);
      const hi = mMin(inner - 1, i + r);
      let v = dilate ? 0 : 1;
      if (!dilate && (i - r < 0 || i + r > inner - 1)) v = 0;
      for (let k = lo; k <= hi; k++) {
        const s = src[base + k * stride];
        if (dilate && s) {
          v = 1;
          break;
        }
        if (!dilate && !s) {
          v = 0;
          break;
        }
      }
      out[base + i * stride] = v;
    }
  }
  return out;
}

export function dilate(mask: Mask, r = 1): Mask {
  if (r <= 0) return { ...mask, data: mask.data.slice() };
  const a = pass(mask.data, mask.width, mask.height, r, true, true);
  return { width: mask.width, height: mask.height, data: pass(a, mask.width, mask.height, r, false, true) };
}

export function erode(mask: Mask, r = 1): Mask {
  if (r <= 0) return { ...mask, data: mask.data.slice() };
  const a = pass(mask.data, mask.width, mask.height, r, true, false);
  return { width: mask.width, height: mask.height, data: pass(a, mask.width, mask.height, r, false, false) };
}

/** Closing (dilate then erode): fills small holes and joins nearby pieces. */
export function close(mask: Mask, r = 1): Mask {
  return erode(dilate(mask, r), r);
}

/** Opening (erode then dilate): removes specks smaller than the structuring element. */
export function open(mask: Mask, r = 1): Mask {
  return dilate(erode(mask, r), r);
}
