/**
 * The ports of video-job ownership (docs/ARCHITECTURE.md, "Who runs a video job"): the store of jobs and leases
 * that every job-running replica shares (Postgres, or PGlite in the one-process mode), and the jobs that run in
 * this replica (jobs/job-manager.ts).
 */
import type { JobRequest } from '../jobs/job-request';
import type { JobStatus } from '../jobs/job-types';
import type { ReplicaLoad } from './domain/placement';

/** Where a job's next run starts: written by its owner as it runs, read by the replica that takes it over. */
export interface JobCheckpoint {
  /** The seq of the next frame to publish (every seq before it was published). */
  nextSeq: number;
  /** A file job's first published frame: its later frames are found in the upload from it (redecode-plan.ts). */
  firstFrame?: { seq: number; timeMs: number };
  /** Counts of every run so far (the job's view). */
  published: number;
  dropped: number;
  reconnects: number;
  /** A live job's last frame time (capture time, Unix ms): frame times never go back across owners. */
  lastTimeMs?: number;
  /** The tracking after frame `nextSeq - 1` (JSON: jobs/frame-detector.ts, tracking/): track ids carry over. */
  tracker?: unknown;
  /**
   * Written as the job left its owner (a handover, its end): no frame after `nextSeq - 1` was published. Without it
   * (a beat's checkpoint, then the owner died) the owner may have published more frames after it.
   */
  final?: boolean;
}

/** A job as the store holds it. */
export interface JobRecord {
  jobId: string;
  request: JobRequest;
  status: JobStatus;
  reason?: string;
  /** The replica that runs it or was given it; null while nobody does (handed over with no receiver). */
  owner: string | null;
  /** Raised at every take: frames carry it, and results refuses a lower one than it has seen. */
  epoch: number;
  /** The owner took it (false: it was given to `owner`, who takes it on its next look). */
  taken: boolean;
  stopRequested: boolean;
  /** A live job offered to this replica while its owner still runs it (make-before-break); null: none. */
  successor: string | null;
  /** The successor's stream is up: the owner hands the job over now. */
  successorReady: boolean;
  checkpoint?: JobCheckpoint;
  startedAt: string;
  endedAt?: string;
}

/** A replica's beat: it renews the lease of the replica and so of every job it owns. */
export interface ReplicaBeat {
  replicaId: string;
  /** Where the other replicas reach it (pictures, stills and stops of its jobs). */
  url: string;
  capacity: number;
  draining: boolean;
}

export interface LiveReplica extends ReplicaLoad {
  url: string;
}

export interface LeaseStore {
  /** Renews `beat`'s lease for `ttlMs` from the store's clock; answers every live replica with its jobs. */
  beat(beat: ReplicaBeat, ttlMs: number): Promise<LiveReplica[]>;
  /** Live replicas, without renewing anything. */
  replicas(): Promise<LiveReplica[]>;
  /**
   * Writes the checkpoints of jobs `owner` runs; answers the ids it no longer owns at those epochs (`lost`: fenced)
   * and those a stop was asked for (`stop`).
   */
  saveCheckpoints(
    owner: string,
    jobs: readonly { jobId: string; epoch: number; checkpoint: JobCheckpoint }[],
  ): Promise<{ lost: string[]; stop: string[] }>;
  /** A new job given to `owner` (taken at once when `taken`); undefined when the id is known already. */
  insert(request: JobRequest, owner: string, taken: boolean): Promise<JobRecord | undefined>;
  /**
   * Takes for `owner` every job handed over to it (with a checkpoint), whatever `max`: its giver chose it by its
   * room as of a beat, and left for another to take, the job would start there without the stream `owner` opened.
   * Then, up to `max` jobs in all: new jobs given to it, and orphans (owner gone, lease expired, or given and not
   * taken within `givenMs`). Each take raises the job's epoch. In the same statement: the running jobs offered to
   * `owner` whose stream it has not said is up (`offered`).
   */
  take(owner: string, max: number, givenMs: number): Promise<{ taken: JobRecord[]; offered: JobRecord[] }>;
  /** Offers a live job its owner runs to `to`, which starts its stream beside it. False: not ours any more. */
  offer(jobId: string, owner: string, epoch: number, to: string): Promise<boolean>;
  /** The successor's stream is up. False: the job is not offered to it (any more). */
  ready(jobId: string, successor: string): Promise<boolean>;
  /** Hands a job over (a planned stop, a rebalance): gives it to `to`, or to nobody. False: not ours any more. */
  release(
    jobId: string,
    owner: string,
    epoch: number,
    checkpoint: JobCheckpoint,
    to: string | null,
  ): Promise<boolean>;
  /** A job ended on its owner. False: not ours any more (its end is not ours to say). */
  finish(
    jobId: string,
    owner: string,
    epoch: number,
    end: { status: Exclude<JobStatus, 'running'>; reason?: string; checkpoint: JobCheckpoint },
  ): Promise<boolean>;
  /** Marks a running job to be stopped by whoever runs it next (a job nobody runs is taken and ended so). */
  requestStop(jobId: string): Promise<JobRecord | undefined>;
  find(ids: readonly string[]): Promise<JobRecord[]>;
  /** The replica leaves: its row goes (its jobs were handed over first). */
  leave(replicaId: string): Promise<void>;
  /** Forgets ended jobs older than `ms`. */
  forgetEnded(ms: number): Promise<number>;
}

/** The jobs that run in this replica (jobs/job-manager.ts), as the owner loop drives them. */
export interface LocalJobs {
  /** Starts a job taken from the store at `epoch`, from its checkpoint when it has one. */
  run(record: JobRecord, onEnd: (end: JobEnd) => void): Promise<void>;
  /** Ids of the jobs running here. */
  runningIds(): string[];
  /** The latest checkpoint of a running job: every frame before it was published. */
  checkpoint(jobId: string): JobCheckpoint | undefined;
  /**
   * Starts the stream of a live job offered here while its owner still runs it; resolves true once its first frame
   * is decoded (false: not a live job, or its stream did not come up). `run` of the job goes on with it.
   */
  warm(record: JobRecord): Promise<boolean>;
  /** Closes a stream `warm` started that no run went on with (the job went elsewhere, or ended). */
  unwarm(jobId: string): void;
  /** Whether a running job reads a live stream (handed over make-before-break). */
  isLive(jobId: string): boolean;
  /** A planned stop: the job stops after the frames in progress are published; resolves with where to go on. */
  handOver(jobId: string): Promise<JobCheckpoint | undefined>;
  /** Ownership lost: the job stops at once and publishes nothing more (no end). */
  fence(jobId: string): void;
  /** Stops a job on the caller's request (its end message follows). */
  stop(jobId: string): void;
}

export interface JobEnd {
  jobId: string;
  status: Exclude<JobStatus, 'running'>;
  reason?: string;
  checkpoint: JobCheckpoint;
}
