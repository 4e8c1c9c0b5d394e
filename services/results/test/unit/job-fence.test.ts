import { FenceWalk } from '../../src/domain/job-fence';

describe("the fence of a job's owners", () => {
  it('keeps messages of the highest epoch seen and refuses lower ones, in message order', () => {
    const walk = new FenceWalk(new Map());
    expect(walk.admit('t', 1)).toBe(true);
    expect(walk.admit('t', 1)).toBe(true);
    expect(walk.admit('t', 2)).toBe(true); // the new owner takes it
    expect(walk.admit('t', 1)).toBe(false); // the old one goes on: refused
    expect(walk.admit('t', 2)).toBe(true);
    expect(walk.changed().get('t')).toEqual({ epoch: 2, refused: 1 });
  });

  it('starts from the stored fence, which a batch never lowers', () => {
    const walk = new FenceWalk(new Map([['t', 3]]));
    expect(walk.admit('t', 2)).toBe(false);
    expect(walk.admit('t', 3)).toBe(true);
    expect(walk.changed().get('t')).toEqual({ epoch: 3, refused: 1 });
  });

  it('counts a message without an epoch as epoch 0: kept until an owner with an epoch is seen', () => {
    const walk = new FenceWalk(new Map());
    expect(walk.admit('t', undefined)).toBe(true);
    expect(walk.admit('t', 1)).toBe(true);
    expect(walk.admit('t', undefined)).toBe(false);
  });

  it('keeps each task apart, and reports nothing for a batch that changes nothing', () => {
    const walk = new FenceWalk(new Map([['a', 2]]));
    expect(walk.admit('a', 2)).toBe(true);
    expect(walk.admit('b', 5)).toBe(true);
    expect(walk.admit('a', 1)).toBe(false);
    expect([...walk.changed()]).toEqual([
      ['b', { epoch: 5, refused: 0 }],
      ['a', { epoch: 2, refused: 1 }],
    ]);
    expect([...new FenceWalk(new Map([['c', 1]])).changed()]).toEqual([]);
  });
});
