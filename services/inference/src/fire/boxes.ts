/** Integer boxes on the working grid (inclusive bounds) and their grouping. */

// Math functions bound once per module: looking globals up inside hot pixel loops is slow when the
// code runs in a vm context (as under jest).
const { max: mMax, min: mMin } = Math;

export interface GridBox {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

export function boxArea(b: GridBox): number {
  return (b.maxX - b.minX + 1) * (b.maxY - b.minY + 1);
}

/** True when `a` and `b` are within `gap` cells of each other (touching or overlapping at gap 0). */
export function boxesNear(a: GridBox, b: GridBox, gap: number): boolean {
  return (
    a.minX <= b.maxX + gap + 1 &&
    b.minX <= a.maxX + gap + 1 &&
    a.minY <= b.maxY + gap + 1 &&
    b.minY <= a.maxY + gap + 1
  );
}

export function unionBox(a: GridBox, b: GridBox): GridBox {
  return {
    minX: mMin(a.minX, b.minX),
    minY: mMin(a.minY, b.minY),
    maxX: mMax(a.maxX, b.maxX),
    maxY: mMax(a.maxY, b.maxY),
  };
}

/**
 * Repeatedly merge boxes that lie within `gap` cells of each other until no pair is near.
 * Returns new boxes; the input is not modified.
 */
export function mergeNearBoxes(boxes: GridBox[], gap: number): GridBox[] {
  let cur = boxes.map((b) => ({ ...b }));
  let changed = true;
  while (changed) {
    changed = false;
    const out: GridBox[] = [];
    for (const b of cur) {
      let merged = b;
      for (let i = 0; i < out.length; i++) {
        if (boxesNear(out[i], merged, gap)) {
          merged = unionBox(out[i], merged);
          out.splice(i, 1);
          i = -1;
          changed = true;
        }
      }
      out.push(merged);
    }
    cur = out;
  }
  return cur;
}

/** Intersection area of two grid boxes (0 when disjoint). */
export function intersectionArea(a: GridBox, b: GridBox): number {
  const w = mMin(a.maxX, b.maxX) - mMax(a.minX, b.minX) + 1;
  const h = mMin(a.maxY, b.maxY) - mMax(a.minY, b.minY) + 1;
  return w > 0 && h > 0 ? w * h : 0;
}
