/**
 * Handovers of the jobs running on this replica (docs/ARCHITECTURE.md, "Who runs a video job"): a planned stop's,
 * and the surplus a replica above its fair load sheds to those below. A live job is offered first and keeps running
 * here until its receiver's stream is up (make-before-break); a file job stops at its next frame.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@vision/shared';
import { receivers, surplusOf } from './domain/placement';
import type { LeaseStore, LiveReplica, LocalJobs } from './port';

export interface HandoverDeps {
  store: LeaseStore;
  jobs: LocalJobs;
  logger: Logger;
  replicaId: string;
  /** How often the store is read while a live job's receiver starts its stream. */
  takeMs: number;
  /** The longest a live job runs here while its receiver starts its stream. */
  overlapMs: number;
  /** The epoch each job running here was taken at (the owner's map: a job handed over leaves it). */
  epochs: Map<string, number>;
}

export class Handovers {
  /** Handovers in progress (a live job keeps running here meanwhile), by job id. */
  private readonly handing = new Map<string, Promise<void>>();

  constructor(private readonly o: HandoverDeps) {}

  has(id: string): boolean {
    return this.handing.has(id);
  }

  inProgress(): Promise<void>[] {
    return [...this.handing.values()];
  }

  /**
   * Scale-out: hands this replica's surplus (live jobs first) to the replicas below their fair load. The beats go on
   * meanwhile: a live job's handover waits for its receiver's stream.
   */
  shed(loads: readonly LiveReplica[]): void {
    const surplus = surplusOf(loads, this.o.replicaId) - this.handing.size;
    if (surplus <= 0) return;
    const to = receivers(loads, this.o.replicaId, surplus);
    const live = (id: string) => Number(this.o.jobs.isLive(id));
    const ids = this.o.jobs
      .runningIds()
      .filter((id) => !this.handing.has(id))
      .sort((a, b) => live(b) - live(a))
      .slice(0, to.length);
    ids.forEach((id, i) => void this.track(id, to[i]));
  }

  /** Runs the handover of `id` to `to`, known in `handing` until it is done. */
  track(id: string, to: string | null): Promise<void> {
    const p = this.handOver(id, to)
      .catch((err: unknown) => this.o.logger.warn({ err, job_id: id }, 'job ownership: handover failed'))
      .finally(() => this.handing.delete(id));
    this.handing.set(id, p);
    return p;
  }

  /**
   * Hands one job over to `to` (or to nobody: the first replica with room takes it). A live job is offered first
   * and runs here until `to` says its stream is up, or for `overlapMs` at most (make-before-break).
   */
  private async handOver(id: string, to: string | null): Promise<void> {
    const epoch = this.o.epochs.get(id);
    const since = performance.now();
    const overlap =
      epoch !== undefined && to && this.o.jobs.isLive(id) ? await this.overlap(id, epoch, to) : undefined;
    const checkpoint = await this.o.jobs.handOver(id);
    this.o.epochs.delete(id);
    if (epoch === undefined || !checkpoint) return;
    const given = await this.o.store.release(id, this.o.replicaId, epoch, checkpoint, to);
    const waited = Math.round(performance.now() - since);
    this.o.logger.info(
      {
        job_id: id,
        to,
        next_seq: checkpoint.nextSeq,
        given,
        ...(overlap && { successor: overlap, waited_ms: waited }),
      },
      'job handed over',
    );
  }

  /**
   * Offers a live job to `to` and waits until its stream is up (or the job is no longer ours to hand over); says how
   * the wait ended: `up`, `late` (the overlap ran out first) or `gone`.
   */
  private async overlap(id: string, epoch: number, to: string): Promise<'up' | 'late' | 'gone'> {
    if (!(await this.o.store.offer(id, this.o.replicaId, epoch, to))) return 'gone';
    const until = performance.now() + this.o.overlapMs;
    while (performance.now() < until && this.o.epochs.get(id) === epoch) {
      await sleep(Math.min(this.o.takeMs, 200), undefined, { ref: false });
      const [r] = await this.o.store.find([id]);
      if (r?.status !== 'running' || r.owner !== this.o.replicaId || r.epoch !== epoch) return 'gone';
      if (r.successorReady) return 'up';
    }
    return this.o.epochs.get(id) === epoch ? 'late' : 'gone';
  }
}
