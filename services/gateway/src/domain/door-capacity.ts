/**
 * What the gateway admits at the door for one upstream, from its replicas' load reports (pure; the
 * runtime is use-cases/door.ts, the rule docs/OVERLOAD.md "Admission at the door").
 *
 * - The calls that run at once: for each replica (counted once, with its latest report) its limit, and as
 *   many again when it lets calls wait for their turn (`max_wait_ms` above 0). A call holds its turn at
 *   the door longer than at the backend (its upload, the relay of its answer): with the limit alone, the
 *   backend's slots would stand idle between calls; the extra calls wait in the backend's queue, within
 *   its bound.
 * - The longest a call may wait for its turn: the longest bound a replica reported.
 * - A replica that has not reported for `ttlMs` is no longer counted (scaled down, or gone): only a new
 *   report prunes, so that an idle service keeps the capacity it last knew.
 */
import type { LoadReport } from '@vision/shared';

export interface ReplicaState {
  limit: number;
  maxWaitMs: number;
  /** When its latest report came (ms). */
  at: number;
}

export interface DoorCapacity {
  limit: number;
  maxWaitMs: number;
}

/** A replica's report is forgotten after this long without another. */
export const REPORT_TTL_MS = 30_000;

/** Records `report` (received at `now`) and drops the replicas silent for longer than `ttlMs`. */
export function recordReport(
  replicas: Map<string, ReplicaState>,
  report: LoadReport,
  now: number,
  ttlMs = REPORT_TTL_MS,
): void {
  replicas.set(report.replica, { limit: report.limit, maxWaitMs: report.maxWaitMs, at: now });
  for (const [id, r] of replicas) if (now - r.at > ttlMs) replicas.delete(id);
}

/** The door's capacity from the replicas known; undefined when none reported yet. */
export function capacityOf(replicas: ReadonlyMap<string, ReplicaState>): DoorCapacity | undefined {
  if (replicas.size === 0) return undefined;
  let limit = 0;
  let maxWaitMs = 0;
  for (const r of replicas.values()) {
    limit += r.maxWaitMs > 0 ? 2 * r.limit : r.limit;
    maxWaitMs = Math.max(maxWaitMs, r.maxWaitMs);
  }
  return { limit, maxWaitMs };
}
