/** The fair-share policy of the inference slots (domain/fair-share.ts). */
import {
  type SlotView,
  decideFile,
  decideLive,
  freeSlots,
  mayStart,
  nextToStart,
  shareOf,
  withStarted,
} from '../../src/domain/fair-share';

const view = (
  slots: number,
  holding: Record<string, number>,
  queued: Array<[string, string]> = [],
): SlotView => ({
  slots,
  holding: new Map(Object.entries(holding)),
  queued: queued.map(([task_id, subject]) => ({ task_id, subject })),
});

describe('shares', () => {
  test('a subject alone may use every slot', () => {
    const v = view(4, { a: 3 });
    expect(shareOf(v, 'a')).toBe(4);
    expect(mayStart(v, 'a')).toBe(true);
    expect(freeSlots(v)).toBe(1);
  });

  test('two subjects share the slots evenly; the asking subject counts as demanding', () => {
    expect(shareOf(view(4, { a: 3 }), 'b')).toBe(2);
    expect(shareOf(view(4, { a: 1 }, [['t1', 'b']]), 'a')).toBe(2);
    // More subjects than slots: each is still owed one.
    expect(shareOf(view(2, { a: 1, b: 1, c: 0 }), 'd')).toBe(1);
  });

  test('over its share, a subject takes only slots no other demanding subject is owed', () => {
    // a holds 2 of 4, b holds 1 and is owed 1 more: the free slot is b's.
    expect(mayStart(view(4, { a: 2, b: 1 }), 'a')).toBe(false);
    // 7 slots, share 3, b holds its 3: the seventh slot nobody else is owed.
    expect(mayStart(view(7, { a: 3, b: 3 }), 'a')).toBe(true);
    // b still owed one of the free slots.
    expect(mayStart(view(6, { a: 3, b: 2 }), 'a')).toBe(false);
    // no free slot: nobody starts.
    expect(mayStart(view(4, { a: 2, b: 2 }), 'b')).toBe(false);
  });
});

describe('live tasks (need a slot now)', () => {
  test('the second key gets a slot while the first holds 3 of 4', () => {
    expect(decideLive(view(4, { a: 3 }), 'b')).toEqual({ kind: 'start' });
  });

  test('a subject at its share is refused while the free slots are owed to others', () => {
    expect(decideLive(view(4, { a: 2, b: 1 }), 'a')).toEqual({
      kind: 'refuse',
      why: 'over_share',
      share: 2,
      held: 2,
    });
  });

  test('a subject under its share is submitted even when our count shows no free slot (the backend decides)', () => {
    expect(decideLive(view(4, { a: 4 }), 'b')).toEqual({ kind: 'start' });
  });

  test('a subject alone is never refused for fair share (the backend says when it is full)', () => {
    expect(decideLive(view(4, { a: 4 }), 'a')).toEqual({ kind: 'start' });
    expect(decideLive(view(4, { a: 4 }, [['t1', 'b']]), 'a')).toMatchObject({ kind: 'refuse' });
  });
});

describe('file tasks (queued, FIFO, bounded)', () => {
  test('start when a slot is free and nobody eligible waits ahead', () => {
    expect(decideFile(view(4, { a: 3 }), 'b', 10)).toEqual({ kind: 'start' });
  });

  test('queue when the backend is full, with the position in the queue', () => {
    expect(decideFile(view(4, { a: 3, b: 1 }), 'b', 10)).toEqual({ kind: 'queue', position: 1 });
    expect(decideFile(view(4, { a: 3, b: 1 }, [['t1', 'b']]), 'a', 10)).toEqual({
      kind: 'queue',
      position: 2,
    });
  });

  test('a free slot is not taken past an eligible task queued earlier', () => {
    const v = view(4, { a: 2, b: 1 }, [['t1', 'b']]);
    expect(decideFile(v, 'c', 10)).toEqual({ kind: 'queue', position: 2 });
  });

  test('refused when the queue is full', () => {
    const v = view(1, { a: 1 }, [['t1', 'a']]);
    expect(decideFile(v, 'b', 1)).toEqual({ kind: 'refuse', why: 'queue_full' });
  });
});

describe('dispatch order', () => {
  test('oldest first among subjects that may start; a subject over its share waits', () => {
    // 4 slots; a holds 2, b holds 1; queue: a's t1 (older), b's t2. The one free slot is b's.
    const v = view(4, { a: 2, b: 1 }, [
      ['t1', 'a'],
      ['t2', 'b'],
    ]);
    expect(nextToStart(v)?.task_id).toBe('t2');
    const after = withStarted(v, { task_id: 't2', subject: 'b' });
    expect(freeSlots(after)).toBe(0);
    expect(nextToStart(after)).toBeUndefined();
  });

  test('FIFO within one subject, and idle slots are used by anyone when nobody else is owed them', () => {
    const v = view(4, { a: 1 }, [
      ['t1', 'a'],
      ['t2', 'a'],
    ]);
    expect(nextToStart(v)?.task_id).toBe('t1');
    const v2 = withStarted(v, { task_id: 't1', subject: 'a' });
    expect(nextToStart(v2)?.task_id).toBe('t2');
  });

  test('no free slot, nothing starts', () => {
    expect(nextToStart(view(2, { a: 1, b: 1 }, [['t1', 'c']]))).toBeUndefined();
  });
});
