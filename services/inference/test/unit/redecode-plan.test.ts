import { redecodeRuns, seekSeconds, slotAt, slotOfSeq } from '../../src/jobs/redecode-plan';

describe('where a file frame is decoded again', () => {
  it('a seq is the slot of the first frame plus its distance from it', () => {
    expect(slotOfSeq(0, { seq: 0, timeMs: 0 }, 5)).toBe(0);
    expect(slotOfSeq(17, { seq: 0, timeMs: 0 }, 5)).toBe(17);
    // A clip whose first sampled frame is at 400 ms; a job started with a first seq.
    expect(slotOfSeq(10, { seq: 0, timeMs: 400 }, 5)).toBe(12);
    expect(slotOfSeq(105, { seq: 100, timeMs: 0 }, 5)).toBe(5);
    // 3 fps: showinfo's 333 ms is slot 1.
    expect(slotOfSeq(1, { seq: 0, timeMs: 333 }, 3)).toBe(2);
  });

  it('seeks to whole seconds that are whole slots, at least the margin before the slot', () => {
    expect(seekSeconds(0, 5, 1000)).toBe(0);
    expect(seekSeconds(9, 5, 1000)).toBe(0); // 1.8 s: 0.8 s before it is not a whole second after 0
    expect(seekSeconds(10, 5, 1000)).toBe(1);
    expect(seekSeconds(47, 5, 1000)).toBe(8); // 9.4 s
    expect(seekSeconds(47, 5, 3000)).toBe(6);
    // 2.5 fps: only even seconds are whole slots.
    expect(seekSeconds(25, 2.5, 1000)).toBe(8); // 10 s: 9 s is 22.5 slots
    // 29.97 fps: no whole second below 100 s is a whole slot.
    expect(seekSeconds(2997, 29.97, 1000)).toBe(0);
    expect(seekSeconds(3200, 29.97, 1000)).toBe(100);
  });

  it('a re-decoded frame is placed by its time plus the seek', () => {
    expect(slotAt(0, 8, 5)).toBe(40);
    expect(slotAt(1400, 8, 5)).toBe(47);
    expect(slotAt(333, 0, 3)).toBe(1);
    expect(slotAt(NaN, 0, 5)).toBeNaN();
  });

  it('one run per span of asked frames, each from its first frame’s seek, as many frames as reach its last', () => {
    expect(redecodeRuns([47, 12, 47, 30], 5, 1000, 64)).toEqual([
      { seekS: 1, slots: [12, 30, 47], frames: 43 },
    ]);
    expect(redecodeRuns([3, 200, 90, 100], 5, 1000, 64)).toEqual([
      { seekS: 0, slots: [3], frames: 4 },
      { seekS: 17, slots: [90, 100], frames: 16 },
      { seekS: 39, slots: [200], frames: 6 },
    ]);
    expect(redecodeRuns([], 5, 1000, 64)).toEqual([]);
  });
});
