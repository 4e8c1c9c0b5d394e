/**
 * Input tensors of image and frame detections, reused: a tensor is lent to the model's worker and handed
 * back (session-worker.ts), then kept here for the next one instead of being dropped. A fresh 2 MB
 * tensor per image costs zero-filling, page faults and garbage collection (about three times the packing
 * itself at 416 px, engines.ts). At most `MAX_KEPT` tensors of each size are kept.
 */
const MAX_KEPT = 8;
const kept = new Map<number, Float32Array[]>();

/** A tensor of `length` floats: a kept one (its old values are overwritten by the caller) or a new one. */
export function takeTensor(length: number): Float32Array {
  return kept.get(length)?.pop() ?? new Float32Array(length);
}

/** Keeps a tensor nobody reads any more for a later takeTensor (dropped when enough are kept). */
export function giveBackTensor(t: Float32Array): void {
  if (t.length === 0) return;
  let list = kept.get(t.length);
  if (!list) kept.set(t.length, (list = []));
  if (list.length < MAX_KEPT) list.push(t);
}
