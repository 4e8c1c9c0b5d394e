/**
 * Counts by label in plain objects. A label is data from the model, so a label such as `__proto__` must land in
 * an own property: these helpers never go through the prototype's setters or getters.
 */
export type Counts = Record<string, number>;

export function countOf(counts: Counts, key: string): number {
  return Object.prototype.hasOwnProperty.call(counts, key) ? counts[key] : 0;
}

export function addCount(counts: Counts, key: string, by = 1): void {
  if (key !== '__proto__') {
    counts[key] = countOf(counts, key) + by;
    return;
  }
  Object.defineProperty(counts, key, {
    value: countOf(counts, key) + by,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** A copy of counts with its keys sorted (a canonical form for summaries and snapshots). */
export function sortedCounts(counts: Counts): Counts {
  const out: Counts = {};
  for (const k of Object.keys(counts).sort()) addCount(out, k, counts[k]);
  return out;
}
