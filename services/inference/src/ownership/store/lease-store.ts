/**
 * The lease store on knex (Postgres, or PGlite in the one-process mode): one row per replica, whose lease its
 * beat renews, and one row per job with its owner, epoch and checkpoint. A job's owner holds it while the
 * owner's replica lease runs: one statement renews every job of a replica, so the store's load grows with
 * replicas, not with jobs. Every write of a job names the epoch it was taken at, so a replica that lost a
 * job can no longer write it.
 */
import type { Knex } from '@vision/shared';
import type { JobRequest } from '../../jobs/job-request';
import type { JobStatus } from '../../jobs/job-types';
import type { JobCheckpoint, JobRecord, LeaseStore, LiveReplica, ReplicaBeat } from '../port';

interface JobRow {
  job_id: string;
  request: JobRequest | string;
  status: string;
  reason: string | null;
  owner: string | null;
  epoch: number;
  taken: boolean;
  stop_requested: boolean;
  successor: string | null;
  successor_ready: boolean;
  checkpoint: JobCheckpoint | string | null;
  started_at: Date | string;
  ended_at: Date | string | null;
}

interface LoadRow {
  replica_id: string;
  url: string;
  capacity: number;
  draining: boolean;
  jobs: number | string;
}

const json = <T>(v: T | string): T => (typeof v === 'string' ? (JSON.parse(v) as T) : v);
const iso = (v: Date | string) => new Date(v).toISOString();

function toRecord(r: JobRow): JobRecord {
  return {
    jobId: r.job_id,
    request: json(r.request),
    status: r.status as JobStatus,
    ...(r.reason !== null && { reason: r.reason }),
    owner: r.owner,
    epoch: Number(r.epoch),
    taken: r.taken,
    stopRequested: r.stop_requested,
    successor: r.successor,
    successorReady: r.successor_ready,
    ...(r.checkpoint !== null && { checkpoint: json(r.checkpoint) }),
    startedAt: iso(r.started_at),
    ...(r.ended_at !== null && { endedAt: iso(r.ended_at) }),
  };
}

const rowsOf = <T>(r: unknown): T[] => (r as { rows: T[] }).rows;

/** Live replicas with the running jobs each owns or was given. */
const LOADS = `select r.replica_id, r.url, r.capacity, r.draining,
    (select count(*) from jobs j where j.owner = r.replica_id and j.status = 'running') as jobs
  from replicas r where r.lease_until > now() order by r.replica_id`;

/** The running jobs nobody runs: given to a replica whose lease ran out, or given and not taken in time. */
const ORPHAN = `(j.owner is null
    or not exists (select 1 from replicas r where r.replica_id = j.owner and r.lease_until > now())
    or (not j.taken and j.owner <> :owner and j.given_at < now() - make_interval(secs => :givenS)))`;

export class KnexLeaseStore implements LeaseStore {
  constructor(private readonly knex: Knex) {}

  async beat(b: ReplicaBeat, ttlMs: number): Promise<LiveReplica[]> {
    await this.knex.raw(
      `insert into replicas (replica_id, url, capacity, draining, lease_until)
       values (?, ?, ?, ?, now() + make_interval(secs => ?))
       on conflict (replica_id) do update set url = excluded.url, capacity = excluded.capacity,
         draining = excluded.draining, lease_until = excluded.lease_until`,
      [b.replicaId, b.url, b.capacity, b.draining, ttlMs / 1000],
    );
    return this.replicas();
  }

  async replicas(): Promise<LiveReplica[]> {
    return rowsOf<LoadRow>(await this.knex.raw(LOADS)).map((r) => ({
      replicaId: r.replica_id,
      url: r.url,
      capacity: r.capacity,
      draining: r.draining,
      jobs: Number(r.jobs),
    }));
  }

  async saveCheckpoints(
    owner: string,
    jobs: readonly { jobId: string; epoch: number; checkpoint: JobCheckpoint }[],
  ): Promise<{ lost: string[]; stop: string[] }> {
    if (jobs.length === 0) return { lost: [], stop: [] };
    const values = jobs.map(() => '(?, ?::integer, ?::jsonb)').join(', ');
    const saved = rowsOf<{ job_id: string; stop_requested: boolean }>(
      await this.knex.raw(
        `update jobs j set checkpoint = v.checkpoint from (values ${values}) as v(job_id, epoch, checkpoint)
         where j.job_id = v.job_id and j.owner = ? and j.epoch = v.epoch and j.status = 'running'
         returning j.job_id, j.stop_requested`,
        [...jobs.flatMap((j) => [j.jobId, j.epoch, JSON.stringify(j.checkpoint)]), owner],
      ),
    );
    const kept = new Set(saved.map((r) => r.job_id));
    return {
      lost: jobs.map((j) => j.jobId).filter((id) => !kept.has(id)),
      stop: saved.filter((r) => r.stop_requested).map((r) => r.job_id),
    };
  }

  async insert(request: JobRequest, owner: string, taken: boolean): Promise<JobRecord | undefined> {
    const rows = rowsOf<JobRow>(
      await this.knex.raw(
        `insert into jobs (job_id, request, status, owner, epoch, taken, given_at, started_at)
         values (?, ?::jsonb, 'running', ?, ?, ?, now(), now())
         on conflict (job_id) do nothing returning *`,
        [request.job_id, JSON.stringify(request), owner, taken ? 1 : 0, taken],
      ),
    );
    return rows[0] && toRecord(rows[0]);
  }

  async take(
    owner: string,
    max: number,
    givenMs: number,
  ): Promise<{ taken: JobRecord[]; offered: JobRecord[] }> {
    const rows = rowsOf<JobRow & { took: boolean }>(
      await this.knex.raw(
        `with handed as (
           select j.job_id from jobs j
           where j.status = 'running' and j.owner = :owner and not j.taken and j.checkpoint is not null
           for update skip locked),
         room as (
           select j.job_id from jobs j
           where j.status = 'running' and ((j.owner = :owner and not j.taken and j.checkpoint is null) or ${ORPHAN})
           order by (j.owner = :owner) desc nulls last, j.started_at
           limit greatest(0, :max - (select count(*) from handed)) for update skip locked),
         took as (
           update jobs set owner = :owner, epoch = jobs.epoch + 1, taken = true, given_at = now(), successor = null,
             successor_ready = false
           where job_id in (select job_id from handed union select job_id from room)
           returning *)
         select *, true as took from took
         union all
         select *, false as took from jobs
         where successor = :owner and not successor_ready and status = 'running' and owner <> :owner
           and job_id not in (select job_id from took)`,
        { owner, max: Math.max(0, max), givenS: givenMs / 1000 },
      ),
    );
    return {
      taken: rows.filter((r) => r.took).map(toRecord),
      offered: rows.filter((r) => !r.took).map(toRecord),
    };
  }

  async offer(jobId: string, owner: string, epoch: number, to: string): Promise<boolean> {
    const n = await this.knex('jobs')
      .where({ job_id: jobId, owner, epoch, status: 'running', taken: true })
      .update({ successor: to, successor_ready: false });
    return n === 1;
  }

  async ready(jobId: string, successor: string): Promise<boolean> {
    const n = await this.knex('jobs')
      .where({ job_id: jobId, successor, status: 'running' })
      .update({ successor_ready: true });
    return n === 1;
  }

  async release(
    jobId: string,
    owner: string,
    epoch: number,
    checkpoint: JobCheckpoint,
    to: string | null,
  ): Promise<boolean> {
    const n = await this.knex('jobs')
      .where({ job_id: jobId, owner, epoch, status: 'running' })
      .update({
        owner: to,
        taken: false,
        successor: null,
        successor_ready: false,
        given_at: this.knex.fn.now(),
        checkpoint: JSON.stringify(checkpoint),
      });
    return n === 1;
  }

  async finish(
    jobId: string,
    owner: string,
    epoch: number,
    end: { status: Exclude<JobStatus, 'running'>; reason?: string; checkpoint: JobCheckpoint },
  ): Promise<boolean> {
    const n = await this.knex('jobs')
      .where({ job_id: jobId, owner, epoch, status: 'running' })
      .update({
        status: end.status,
        reason: end.reason ?? null,
        checkpoint: JSON.stringify(end.checkpoint),
        ended_at: this.knex.fn.now(),
      });
    return n === 1;
  }

  async requestStop(jobId: string): Promise<JobRecord | undefined> {
    await this.knex('jobs').where({ job_id: jobId, status: 'running' }).update({ stop_requested: true });
    return (await this.find([jobId]))[0];
  }

  async find(ids: readonly string[]): Promise<JobRecord[]> {
    if (ids.length === 0) return [];
    const rows = (await this.knex('jobs').whereIn('job_id', [...ids])) as JobRow[];
    return rows.map(toRecord);
  }

  async leave(replicaId: string): Promise<void> {
    await this.knex('replicas').where({ replica_id: replicaId }).delete();
  }

  async forgetEnded(ms: number): Promise<number> {
    return this.knex('jobs')
      .whereNot({ status: 'running' })
      .andWhere('ended_at', '<', this.knex.raw('now() - make_interval(secs => ?)', [ms / 1000]))
      .delete();
  }
}
