/**
 * Where video jobs run (docs/ARCHITECTURE.md, "Who runs a video job"). Pure: the figures come from the
 * lease store, the decisions are carried out by ownership/replica-owner.ts.
 *
 * - A new job goes to the replica with the most free room; this replica wins a tie (no hop to start it).
 * - `over_capacity` only when no live replica has room.
 * - Scale-out: every replica above its fair load hands its surplus of live jobs to the replicas below
 *   theirs, so the moves are the ideal number (the sum of the surpluses) and no job moves twice.
 */

/** One live replica as the lease store sees it. */
export interface ReplicaLoad {
  replicaId: string;
  /** Jobs it may run at once (its INFERENCE_MAX_JOBS). */
  capacity: number;
  /** Jobs it owns or was given and has not yet taken. */
  jobs: number;
  /** It is stopping: it takes no job. */
  draining: boolean;
}

const room = (r: ReplicaLoad) => (r.draining ? 0 : Math.max(0, r.capacity - r.jobs));

/** The replica a new job goes to, or undefined when every live replica is full. */
export function placeJob(replicas: readonly ReplicaLoad[], self: string): string | undefined {
  let best: ReplicaLoad | undefined;
  for (const r of replicas) {
    if (room(r) === 0) continue;
    if (
      !best ||
      room(r) > room(best) ||
      (room(r) === room(best) &&
        (r.replicaId === self || (best.replicaId !== self && r.replicaId < best.replicaId)))
    )
      best = r;
  }
  return best?.replicaId;
}

/** The capacity tasks shares between subjects: the sum over live replicas that take jobs. */
export function totalCapacity(replicas: readonly ReplicaLoad[]): number {
  let n = 0;
  for (const r of replicas) if (!r.draining) n += r.capacity;
  return n;
}

/**
 * The fair load of each replica that takes jobs: the jobs spread evenly (a spread of at most one), never above a
 * replica's capacity. The `total mod n` shares of one more go to the replicas that hold the most jobs now (then
 * by id), so that reaching it moves the fewest jobs and every replica computes the same targets.
 */
export function fairLoads(replicas: readonly ReplicaLoad[]): Map<string, number> {
  const takers = replicas
    .filter((r) => !r.draining)
    .sort((a, b) => b.jobs - a.jobs || (a.replicaId < b.replicaId ? -1 : 1));
  const total = replicas.reduce((n, r) => n + r.jobs, 0);
  const out = new Map<string, number>();
  if (takers.length === 0) return out;
  const base = Math.floor(total / takers.length);
  const extra = total % takers.length;
  takers.forEach((r, i) => out.set(r.replicaId, Math.min(r.capacity, base + (i < extra ? 1 : 0))));
  return out;
}

/** How many of its jobs `self` hands over to even the load: what it holds above its fair load. */
export function surplusOf(replicas: readonly ReplicaLoad[], self: string): number {
  const me = replicas.find((r) => r.replicaId === self);
  const target = fairLoads(replicas).get(self);
  if (!me || target === undefined) return 0;
  return Math.max(0, me.jobs - target);
}

/**
 * The receivers of `count` jobs handed over by `self`: the replicas furthest below their fair load first, each
 * given at most what it lacks. Fewer than `count` when the others lack less.
 */
export function receivers(replicas: readonly ReplicaLoad[], self: string, count: number): string[] {
  const fair = fairLoads(replicas);
  const lack = replicas
    .filter((r) => r.replicaId !== self && room(r) > 0)
    .map((r) => ({ id: r.replicaId, lack: Math.min(room(r), (fair.get(r.replicaId) ?? 0) - r.jobs) }))
    .filter((r) => r.lack > 0)
    .sort((a, b) => b.lack - a.lack || (a.id < b.id ? -1 : 1));
  const out: string[] = [];
  while (out.length < count && lack.some((r) => r.lack > 0)) {
    for (const r of lack) {
      if (out.length >= count) break;
      if (r.lack > 0) {
        out.push(r.id);
        r.lack--;
      }
    }
  }
  return out;
}

/** The replica a job handed over at a planned stop goes to: the one with the most room, or none. */
export function handoverTarget(replicas: readonly ReplicaLoad[], self: string): string | undefined {
  return placeJob(
    replicas.filter((r) => r.replicaId !== self),
    self,
  );
}
