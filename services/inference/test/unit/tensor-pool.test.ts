/** Reused input tensors of image detections (tensor-pool.ts). */
import { giveBackTensor, takeTensor } from '../../src/model/tensor-pool';

describe('tensor pool', () => {
  it('hands a given-back tensor out again, by length, and a new one when none is kept', () => {
    const a = takeTensor(12);
    expect(a).toHaveLength(12);
    giveBackTensor(a);
    expect(takeTensor(12)).toBe(a);
    expect(takeTensor(12)).not.toBe(a);
    giveBackTensor(a);
    expect(takeTensor(13)).not.toBe(a);
    expect(takeTensor(12)).toBe(a);
  });

  it('keeps at most eight tensors of a length, and never an emptied (lent) one', () => {
    const many = Array.from({ length: 10 }, () => new Float32Array(7));
    many.forEach(giveBackTensor);
    const out = new Set(Array.from({ length: 10 }, () => takeTensor(7)));
    expect(many.filter((t) => out.has(t))).toHaveLength(8);
    // A tensor lent to the worker thread has its buffer transferred away: it reads as length 0 here.
    const lent = new Float32Array(7);
    structuredClone(lent.buffer, { transfer: [lent.buffer] });
    expect(lent).toHaveLength(0);
    giveBackTensor(lent);
    expect(takeTensor(0)).not.toBe(lent);
    expect(takeTensor(7)).not.toBe(lent);
  });
});
