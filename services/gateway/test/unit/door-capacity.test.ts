import { type ReplicaState, capacityOf, recordReport } from '../../src/domain/door-capacity';

const report = (replica: string, limit: number, maxWaitMs = 1000) => ({
  replica,
  limit,
  maxWaitMs,
  running: 0,
  waiting: 0,
});

describe('the door capacity from load reports', () => {
  it('is unknown until a replica reported', () => {
    expect(capacityOf(new Map())).toBeUndefined();
  });

  it('sums the limits of the replicas, each with its latest report, and takes the longest wait', () => {
    const replicas = new Map<string, ReplicaState>();
    recordReport(replicas, report('a', 4, 0), 0);
    recordReport(replicas, report('b', 2, 0), 10);
    recordReport(replicas, report('a', 3, 0), 20);
    expect(capacityOf(replicas)).toEqual({ limit: 5, maxWaitMs: 0 });
  });

  it('counts a replica that lets calls wait twice: its running slots and as many in its queue', () => {
    const replicas = new Map<string, ReplicaState>();
    recordReport(replicas, report('a', 4, 1000), 0);
    recordReport(replicas, report('b', 2, 0), 10);
    expect(capacityOf(replicas)).toEqual({ limit: 10, maxWaitMs: 1000 });
  });

  it('forgets a replica silent for longer than the time to live, when another reports', () => {
    const replicas = new Map<string, ReplicaState>();
    recordReport(replicas, report('a', 4, 0), 0, 1000);
    recordReport(replicas, report('b', 2, 0), 500, 1000);
    expect(capacityOf(replicas)?.limit).toBe(6);
    recordReport(replicas, report('b', 2, 0), 1500, 1000);
    expect(capacityOf(replicas)?.limit).toBe(2);
  });
});
