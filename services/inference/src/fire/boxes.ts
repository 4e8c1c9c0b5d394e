/** Integer boxes on the working grid (inclusive bounds) and their grouping. */

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
    minX: Math.min(a.minX, b.minX),
    minY: Math.min(a.minY, b.minY),
    maxX: Math.max(a.maxX, b.maxX),
    maxY: Math.max(a.maxY, b.maxY),
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
  const w = Math.min(a.maxX, b.maxX) - Math.max(a.minX, b.minX) + 1;
  const h = Math.min(a.maxY, b.maxY) - Math.max(a.minY, b.minY) + 1;
  return w > 0 && h > 0 ? w * h : 0;
}
