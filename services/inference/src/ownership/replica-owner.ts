/**
 * This replica's part in running video jobs (docs/ARCHITECTURE.md, "Who runs a video job"). Every `beatMs` it
 * renews its lease, which holds every job it owns, writes their checkpoints and learns the other replicas' loads;
 * every `takeMs`, while it has room, it takes the jobs given to it and the orphans of replicas whose lease ran out.
 * A job it no longer owns (its lease ran out while it was paused or cut off) is fenced at once; once the store
 * answers again, each job fenced so that nobody took meanwhile is given back to it, to run on from there. A planned stop
 * hands every job over; a replica above its fair load hands its surplus to those below theirs.
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from '@vision/shared';
import { handoverTarget, placeJob } from './domain/placement';
import { Handovers } from './handovers';
import type { JobCheckpoint, JobEnd, JobRecord, LeaseStore, LiveReplica, LocalJobs } from './port';

export interface ReplicaOwnerOptions {
  store: LeaseStore;
  jobs: LocalJobs;
  logger: Logger;
  replicaId: string;
  capacity: number;
  /** INFERENCE_LEASE_TTL_MS: a replica silent this long loses its jobs to the others. */
  leaseTtlMs: number;
  /** How often the lease is renewed and the checkpoints written. */
  beatMs: number;
  /** How often a replica with room looks for jobs to take. */
  takeMs: number;
  /** A job given to a replica that did not take it within this is anybody's. */
  givenMs: number;
  /** Whether a replica above its fair load hands jobs to those below (scale-out). */
  rebalance: boolean;
  /**
   * INFERENCE_HANDOVER_OVERLAP_MS: the longest a live job's owner keeps running it while the replica it is handed to
   * starts its stream (make-before-break); then it is handed over whether that stream is up or not.
   */
  overlapMs: number;
}

export class ReplicaOwner {
  /** The epoch each job running here was taken at. */
  private readonly epochs = new Map<string, number>();
  /** Live jobs offered here whose stream is starting or up, until taken (or given up at the timer). */
  private readonly warming = new Map<string, NodeJS.Timeout>();
  /** Runs of jobs taken here that are starting (a file's source is found and probed first). */
  private readonly starting = new Set<Promise<void>>();
  /**
   * Jobs fenced here because our lease ran out, with the epoch and checkpoint they ran at: given back to this
   * replica in the store at the next beat that reaches it, so that a job nobody else took runs again from there.
   */
  private readonly lapsed = new Map<string, { epoch: number; checkpoint: JobCheckpoint }>();
  /** Ends not yet written to the store (it was unreachable): written at the next beat. */
  private readonly ends = new Map<string, { epoch: number; end: JobEnd }>();
  private loads: LiveReplica[] = [];
  /** Where the other replicas reach this one (known once it listens). */
  private url = '';
  private lastBeat = 0;
  private beats = 0;
  private draining = false;
  private timers: NodeJS.Timeout[] = [];
  /** One beat or take at a time. */
  private turn: Promise<void> = Promise.resolve();

  /** Handovers in progress: a planned stop's, and the surplus shed to replicas below their fair load. */
  private readonly handovers: Handovers;

  constructor(private readonly o: ReplicaOwnerOptions) {
    this.handovers = new Handovers({ ...o, epochs: this.epochs });
  }

  get replicaId(): string {
    return this.o.replicaId;
  }

  /** Joins: the first beat must reach the store (a replica that cannot is not ready), then the loops run. */
  async start(url: string): Promise<void> {
    this.url = url;
    await this.beat();
    const loop = (ms: number, fn: () => Promise<void>, what: string) =>
      setInterval(() => {
        this.turn = this.turn.then(fn).catch((err: unknown) => {
          this.o.logger.warn({ err, replica: this.o.replicaId }, `job ownership: ${what} failed`);
        });
      }, ms).unref();
    this.timers = [
      loop(this.o.beatMs, () => this.beat(), 'beat'),
      loop(this.o.takeMs, () => this.take(), 'take'),
      // Apart from the beats: a beat that hangs on an unreachable store must not keep our jobs publishing.
      setInterval(() => this.checkLease(), this.o.beatMs).unref(),
    ];
  }

  /** The live replicas as of the last beat (their url, capacity and jobs). */
  replicas(): readonly LiveReplica[] {
    return this.loads;
  }

  /** Where a new job runs: this replica, another one (which takes it on its next look), or nowhere (all full). */
  place(): string | undefined {
    if (this.draining) return undefined;
    const target = placeJob(this.loads, this.o.replicaId);
    const r = this.loads.find((l) => l.replicaId === target);
    if (r) r.jobs++; // until the next beat counts it
    return target;
  }

  /** Runs a job this replica just placed on itself. */
  async runHere(record: JobRecord): Promise<void> {
    clearTimeout(this.warming.get(record.jobId));
    this.warming.delete(record.jobId); // the run goes on with its warm stream
    this.epochs.set(record.jobId, record.epoch);
    await this.o.jobs.run(record, (end) => void this.ended(record.epoch, end));
  }

  /** Whether a beat reached the store recently enough that our lease still holds (with a beat to spare). */
  private leaseHolds(): boolean {
    return performance.now() - this.lastBeat <= this.o.leaseTtlMs - this.o.beatMs;
  }

  /** Our lease may have run out (no beat reached the store in time): the others may run our jobs already. */
  private checkLease(): void {
    if (this.lastBeat === 0 || this.leaseHolds()) return;
    for (const id of this.o.jobs.runningIds()) {
      const epoch = this.epochs.get(id);
      const checkpoint = this.o.jobs.checkpoint(id);
      if (epoch !== undefined && checkpoint) this.lapsed.set(id, { epoch, checkpoint });
      this.fence(id, 'lease not renewed in time');
    }
  }

  /**
   * Gives the jobs fenced at a lapse back to this replica (untaken, with their checkpoint): the next take runs each
   * again at a new epoch, unless another replica took it meanwhile (its epoch moved on, and nothing is written).
   */
  private async giveBackLapsed(): Promise<void> {
    for (const [id, { epoch, checkpoint }] of this.lapsed) {
      await this.o.store.release(id, this.o.replicaId, epoch, checkpoint, this.o.replicaId);
      this.lapsed.delete(id);
    }
  }

  private async beat(): Promise<void> {
    const { store, jobs } = this.o;
    this.checkLease();
    const started = performance.now();
    this.loads = await store.beat(
      { replicaId: this.o.replicaId, url: this.url, capacity: this.o.capacity, draining: this.draining },
      this.o.leaseTtlMs,
    );
    this.lastBeat = started;
    this.beats++;
    await this.giveBackLapsed();
    for (const [id, { epoch, end }] of this.ends) {
      await store.finish(id, this.o.replicaId, epoch, end);
      this.ends.delete(id);
    }
    const saving = jobs
      .runningIds()
      .map((id) => ({ jobId: id, epoch: this.epochs.get(id), checkpoint: jobs.checkpoint(id) }))
      .filter(
        (j): j is { jobId: string; epoch: number; checkpoint: NonNullable<typeof j.checkpoint> } =>
          j.epoch !== undefined && j.checkpoint !== undefined,
      );
    const { lost, stop } = await store.saveCheckpoints(this.o.replicaId, saving);
    // A job released by its handover meanwhile has left already: no longer ours, and not fenced.
    for (const id of lost) if (!this.handovers.has(id)) this.fence(id, 'owned by another replica');
    for (const id of stop) jobs.stop(id);
    // Not during a rollout: the draining replica's handovers fill the others, and a second decider would overfill one.
    if (this.o.rebalance && !this.draining && this.beats > 2 && !this.loads.some((l) => l.draining))
      this.handovers.shed(this.loads);
    if (this.beats % 300 === 0) await store.forgetEnded(24 * 3600_000);
  }

  private async take(): Promise<void> {
    // Not while our lease may have run out: the store would offer our own jobs back to us as orphans.
    if (this.draining || !this.leaseHolds()) return;
    // Jobs taken and still starting count: their epoch is known before they run.
    const room = this.o.capacity - Math.max(this.o.jobs.runningIds().length, this.epochs.size);
    const { taken, offered } = await this.o.store.take(this.o.replicaId, room, this.o.givenMs);
    for (const record of offered) this.warmUp(record);
    // Started, not waited for: a job handed over here meanwhile must not wait behind a file's source (its upload
    // found and probed first) past the time after which it is anybody's, and start elsewhere without its stream.
    for (const record of taken) {
      const id = record.jobId;
      const warm = this.warming.has(id); // its stream started while its owner still ran it
      const from = record.checkpoint?.nextSeq ?? 0;
      this.o.logger.info({ job_id: id, epoch: record.epoch, from_seq: from, warm }, 'job taken');
      const run = this.runHere(record)
        .catch((err: unknown) => this.o.logger.warn({ err, job_id: id }, 'job ownership: job not started'))
        .finally(() => this.starting.delete(run));
      this.starting.add(run);
    }
  }

  /** A live job offered here: its stream starts, and the store hears when it is up. */
  private warmUp(record: JobRecord): void {
    const id = record.jobId;
    if (this.warming.has(id) || this.epochs.has(id)) return;
    // Not taken within the overlap and the take that follows it: the job went elsewhere, or ended.
    const expire = () => {
      this.warming.delete(id);
      this.o.jobs.unwarm(id);
    };
    this.warming.set(id, setTimeout(expire, this.o.overlapMs + this.o.givenMs).unref());
    this.o.jobs
      .warm(record)
      .then(async (up) => {
        if (up && this.warming.has(id)) await this.o.store.ready(id, this.o.replicaId);
      })
      .catch((err: unknown) => {
        this.o.logger.warn({ err, job_id: id }, 'job ownership: stream of a job offered here not started');
      });
  }

  private async ended(epoch: number, end: JobEnd): Promise<void> {
    this.epochs.delete(end.jobId);
    try {
      await this.o.store.finish(end.jobId, this.o.replicaId, epoch, end);
    } catch (err) {
      this.o.logger.warn({ err, job_id: end.jobId }, 'job end not written yet: written at the next beat');
      this.ends.set(end.jobId, { epoch, end });
    }
  }

  private fence(id: string, why: string): void {
    this.o.logger.warn({ job_id: id, why }, 'job fenced: it runs elsewhere');
    this.o.jobs.fence(id);
    this.epochs.delete(id);
  }

  /**
   * A planned stop (SIGTERM): no job is taken any more, every job is handed over (spread over the replicas with
   * room, or left to whoever starts next), then the replica leaves. The beats go on until then: a live job's handover
   * waits up to `overlapMs` for its receiver's stream, and a lease run out meanwhile would make it a takeover.
   */
  async drain(): Promise<void> {
    this.draining = true;
    this.turn = this.turn.then(() =>
      this.beat().catch((err: unknown) => this.o.logger.warn({ err }, 'draining beat failed')),
    );
    await this.turn;
    await Promise.all(this.starting); // a job taken just before is handed over too
    const loads = this.loads.map((l) => ({ ...l }));
    const handing = this.handovers.inProgress();
    const plan = this.o.jobs
      .runningIds()
      .filter((id) => !this.handovers.has(id))
      .map((id) => {
        const to = handoverTarget(loads, this.o.replicaId) ?? null;
        const r = loads.find((l) => l.replicaId === to);
        if (r) r.jobs++;
        return { id, to };
      });
    await Promise.all([...handing, ...plan.map((p) => this.handovers.track(p.id, p.to))]);
    for (const t of this.timers) clearInterval(t);
    await this.turn;
    await this.o.store.leave(this.o.replicaId);
  }

  /** Stops the loops without handing anything over (tests; a crash is this and no more). */
  halt(): void {
    for (const t of this.timers) clearInterval(t);
    for (const t of this.warming.values()) clearTimeout(t);
  }
}
