/**
 * Connected-component labelling (8-connectivity) of a binary mask with per-component bounding
 * boxes and pixel counts. Iterative flood fill with an explicit stack (no recursion).
 */
import type { Mask } from './raster';

export interface Component {
  /** Label in `labels` (1-based). */
  label: number;
  area: number;
  /** Inclusive pixel bounds. */
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

export interface Labelling {
  /** 0 = background, otherwise the component's label. */
  labels: Int32Array;
  components: Component[];
}

export function labelComponents(mask: Mask): Labelling {
  const { width: w, height: h, data } = mask;
  const labels = new Int32Array(w * h);
  const components: Component[] = [];
  const stack = new Int32Array(w * h);
  let next = 1;
  for (let start = 0; start < w * h; start++) {
    if (!data[start] || labels[start]) continue;
    const label = next++;
    const c: Component = { label, area: 0, minX: w, minY: h, maxX: -1, maxY: -1 };
    let top = 0;
    stack[top++] = start;
    labels[start] = label;
    while (top > 0) {
      const p = stack[--top];
      const x = p % w;
      const y = (p - x) / w;
      c.area++;
      if (x < c.minX) c.minX = x;
      if (x > c.maxX) c.maxX = x;
      if (y < c.minY) c.minY = y;
      if (y > c.maxY) c.maxY = y;
      for (let dy = -1; dy <= 1; dy++) {
        const ny = y + dy;
        if (ny < 0 || ny >= h) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const nx = x + dx;
          if (nx < 0 || nx >= w || (dx === 0 && dy === 0)) continue;
          const q = ny * w + nx;
          if (data[q] && !labels[q]) {
            labels[q] = label;
            stack[top++] = q;
          }
        }
      }
    }
    components.push(c);
  }
  return { labels, components };
}
