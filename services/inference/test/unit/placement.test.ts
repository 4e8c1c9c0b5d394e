import {
  fairLoads,
  handoverTarget,
  placeJob,
  receivers,
  surplusOf,
  totalCapacity,
  type ReplicaLoad,
} from '../../src/ownership/domain/placement';

const r = (replicaId: string, jobs: number, capacity = 10, draining = false): ReplicaLoad => ({
  replicaId,
  jobs,
  capacity,
  draining,
});

/** Replicas a, b, c... holding `jobs` each. */
const loads = (jobs: number[], capacity = 100): ReplicaLoad[] =>
  jobs.map((n, i) => r(String.fromCharCode(97 + i), n, capacity));

const spreadOf = (rs: readonly ReplicaLoad[]) => {
  const n = rs.filter((x) => !x.draining).map((x) => x.jobs);
  return Math.max(...n) - Math.min(...n);
};

/**
 * Every replica above its fair load hands its surplus over, one after the other, each on the loads as the previous
 * ones left them (as replicas beating in turn see them), beat after beat until nobody moves a job. Answers the
 * loads at the end and the jobs moved.
 */
function rebalance(start: readonly ReplicaLoad[]): { end: ReplicaLoad[]; moves: number; beats: number } {
  const now = start.map((x) => ({ ...x }));
  let moves = 0;
  for (let beats = 1; beats <= 10; beats++) {
    const before = moves;
    for (const self of now) {
      for (const id of receivers(now, self.replicaId, surplusOf(now, self.replicaId))) {
        self.jobs--;
        (now.find((x) => x.replicaId === id) as ReplicaLoad).jobs++;
        moves++;
      }
    }
    if (moves === before) return { end: now, moves, beats };
  }
  throw new Error('the loads never settled');
}

describe('where a new job goes', () => {
  it('to the replica with the most free room', () => {
    const rs = [r('a', 5), r('b', 2), r('c', 0, 4)];
    expect(placeJob(rs, 'a')).toBe('b');
    expect(placeJob([...rs].reverse(), 'c')).toBe('b');
  });

  it('to this replica on a tie (no hop to start it), else to the lowest id among the tied', () => {
    const rs = [r('a', 5), r('b', 5), r('c', 7)];
    expect(placeJob(rs, 'b')).toBe('b');
    expect(placeJob(rs, 'a')).toBe('a');
    expect(placeJob(rs, 'c')).toBe('a'); // c has less room: no tie
    expect(placeJob([...rs].reverse(), 'z')).toBe('a'); // a replica not in the list (it has not beaten yet)
  });

  it('nowhere when every live replica is full', () => {
    expect(placeJob([r('a', 10), r('b', 10)], 'a')).toBeUndefined();
    expect(placeJob([r('a', 12)], 'a')).toBeUndefined(); // more than its capacity: no room, not negative
    expect(placeJob([], 'a')).toBeUndefined();
  });

  it('never to a draining replica, however much room it has', () => {
    expect(placeJob([r('a', 0, 10, true), r('b', 9)], 'a')).toBe('b');
    expect(placeJob([r('a', 0, 10, true), r('b', 10)], 'b')).toBeUndefined();
    expect(totalCapacity([r('a', 0, 10, true), r('b', 9, 6)])).toBe(6);
  });
});

describe('the fair load of each replica', () => {
  it('spreads the jobs by at most one, the shares of one more to the replicas holding the most', () => {
    const fair = fairLoads(loads([6, 3, 1]));
    expect(Object.fromEntries(fair)).toEqual({ a: 4, b: 3, c: 3 });
    // A tie on the jobs held goes to the lowest id, whatever the order of the list.
    expect(Object.fromEntries(fairLoads(loads([3, 3, 1]).reverse()))).toEqual({ a: 3, b: 2, c: 2 });
    const many = fairLoads(loads([23, 0, 17, 1, 9, 4, 0]));
    const shares = [...many.values()];
    expect(shares.reduce((x, y) => x + y, 0)).toBe(54);
    expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
  });

  it("counts a draining replica's jobs, gives it no share, and never shares above a capacity", () => {
    const rs = [r('a', 4, 10, true), r('b', 2), r('c', 0)];
    expect(Object.fromEntries(fairLoads(rs))).toEqual({ b: 3, c: 3 });
    expect(Object.fromEntries(fairLoads([r('a', 0, 2), r('b', 8, 10)]))).toEqual({ a: 2, b: 4 });
    expect(fairLoads([r('a', 3, 10, true)]).size).toBe(0);
  });
});

describe('the surplus a replica hands over, and to whom', () => {
  it('hands over what it holds above its fair load: the fewest moves to a spread of one', () => {
    const rs = loads([6, 3, 1]);
    expect(['a', 'b', 'c'].map((id) => surplusOf(rs, id))).toEqual([2, 0, 0]);
    expect(receivers(rs, 'a', 2)).toEqual(['c', 'c']);
    // Asked for more than the others lack: only what they lack.
    expect(receivers(rs, 'a', 5)).toEqual(['c', 'c']);
    expect(surplusOf(rs, 'z')).toBe(0); // not a live replica
    expect(surplusOf([r('a', 9, 10, true), r('b', 0)], 'a')).toBe(0); // draining: its stop hands everything over
  });

  it('scale-out: four replicas of five and two new ones move six jobs, the new ones taking three each', () => {
    const rs = loads([5, 5, 5, 5, 0, 0]);
    expect(rs.map((x) => surplusOf(rs, x.replicaId))).toEqual([1, 1, 2, 2, 0, 0]);
    expect(receivers(rs, 'a', 1)).toEqual(['e']);
    expect(receivers(rs, 'd', 2)).toEqual(['e', 'f']);
    const { end, moves } = rebalance(rs);
    expect(moves).toBe(6);
    expect(end.map((x) => x.jobs)).toEqual([4, 4, 3, 3, 3, 3]);
  });

  it('the receivers furthest below first, each given at most what it lacks and what it has room for', () => {
    const rs = [r('a', 12, 20), r('b', 3, 4), r('c', 0, 20), r('d', 0, 20, true)];
    // 15 jobs: a 5, b 4 (its capacity), c 5; d drains and takes nothing.
    expect(Object.fromEntries(fairLoads(rs))).toEqual({ a: 5, b: 4, c: 5 });
    expect(receivers(rs, 'a', 7)).toEqual(['c', 'b', 'c', 'c', 'c', 'c']);
  });

  it('replicas shedding in turn reach a spread of one in the fewest moves', () => {
    // [jobs..., the fewest moves to a spread <= 1, counted by hand]
    const cases: [number[], number][] = [
      [[6, 3, 1], 2],
      [[10, 0, 0, 0, 0], 8],
      [[7, 7, 7, 0], 5],
      [[23, 23, 22, 22, 0, 0], 30],
      [[4, 4, 4, 3], 0],
      [[9, 1, 5, 5], 4],
    ];
    for (const [jobs, fewest] of cases) {
      const rs = loads(jobs);
      const { end, moves } = rebalance(rs);
      expect({ jobs, spread: spreadOf(end) <= 1 }).toEqual({ jobs, spread: true });
      expect({ jobs, moves }).toEqual({ jobs, moves: fewest });
      expect(end.reduce((n, x) => n + x.jobs, 0)).toBe(jobs.reduce((a, b) => a + b, 0));
    }
  });
});

describe('where a job goes at a planned stop', () => {
  it('to the other replica with the most room, never back to the one stopping', () => {
    const rs = [r('a', 0), r('b', 6), r('c', 3)];
    expect(handoverTarget(rs, 'a')).toBe('c');
    expect(handoverTarget([r('a', 0), r('b', 3), r('c', 3)], 'a')).toBe('b'); // a tie: the lowest id
    expect(handoverTarget([r('a', 0), r('b', 3, 10, true), r('c', 9)], 'a')).toBe('c');
  });

  it('to nobody when the others are full or there are none', () => {
    expect(handoverTarget([r('a', 2), r('b', 10)], 'a')).toBeUndefined();
    expect(handoverTarget([r('a', 2)], 'a')).toBeUndefined();
  });
});
