/**
 * The internal jobs API (docs/INTERNAL.md) answered alike by every job-running replica: a submission is placed on
 * the replica with the most room, a query reads the store (and this replica's own running jobs), and what only a
 * job's owner can answer (stills, pictures, its ring, a stop) is forwarded to the owner by the routes.
 */
import type { JobManager, SubmitOutcome } from '../jobs/job-manager';
import type { JobRequest } from '../jobs/job-request';
import type { JobView } from '../jobs/job-types';
import { Submissions } from '../jobs/submissions';
import { totalCapacity } from './domain/placement';
import type { JobRecord, LeaseStore } from './port';
import type { ReplicaOwner } from './replica-owner';

/** Where a job's owner answers. */
export type JobPlace =
  { kind: 'here' } | { kind: 'owner'; url: string } | { kind: 'nowhere'; record?: JobRecord };

export interface Capacity {
  /** Job slots of the live replicas that take jobs (tasks shares them between subjects). */
  slots: number;
  /** Jobs running or given to a replica. */
  running: number;
  replicas: number;
}

/** A job's view from its record (the counts as of its owner's last checkpoint). */
export function viewOf(r: JobRecord): JobView {
  const cp = r.checkpoint;
  const stopping = r.status === 'running' && r.stopRequested;
  return {
    job_id: r.jobId,
    scene_code: r.request.scene_code as JobView['scene_code'],
    status: stopping ? 'stopped' : r.status,
    ...(r.reason !== undefined && { reason: r.reason }),
    frames_published: cp?.published ?? 0,
    frames_dropped: cp?.dropped ?? 0,
    reconnects: cp?.reconnects ?? 0,
    started_at: r.startedAt,
    ...(r.endedAt !== undefined && { ended_at: r.endedAt }),
  };
}

export class OwnedJobs {
  /** Submissions of one job id in flight here: the second waits for the first. */
  private readonly submitting = new Submissions();

  constructor(
    private readonly store: LeaseStore,
    private readonly owner: ReplicaOwner,
    private readonly jobs: JobManager,
  ) {}

  async submit(req: JobRequest): Promise<SubmitOutcome> {
    const joined = this.submitting.joined(req.job_id);
    if (joined) return joined;
    return this.submitting.run(req.job_id, () => this.place(req));
  }

  private async place(req: JobRequest): Promise<SubmitOutcome> {
    const known = await this.get(req.job_id);
    if (known) return { outcome: 'duplicate', job: known };
    const prepared = await this.jobs.prepare(req);
    if (!prepared.ok) return { outcome: 'rejected', reason: prepared.reason };
    const target = this.owner.place();
    if (!target) return { outcome: 'over_capacity' };
    const here = target === this.owner.replicaId;
    const record = await this.store.insert(req, target, here);
    if (!record) {
      const job = await this.get(req.job_id);
      return job ? { outcome: 'duplicate', job } : { outcome: 'over_capacity' };
    }
    if (here) await this.owner.runHere(record);
    return { outcome: 'accepted', job: this.jobs.get(req.job_id) ?? viewOf(record) };
  }

  async get(id: string): Promise<JobView | undefined> {
    return (await this.list([id]))[0];
  }

  /** Views of the known ids: this replica's running jobs as they are, the others as of their last checkpoint. */
  async list(ids: readonly string[]): Promise<JobView[]> {
    const local = new Map<string, JobView>();
    for (const id of ids) {
      const v = this.jobs.get(id);
      if (v?.status === 'running') local.set(id, v);
    }
    const rest = ids.filter((id) => !local.has(id));
    const records = new Map((await this.store.find(rest)).map((r) => [r.jobId, r]));
    return ids
      .map((id) => local.get(id) ?? (records.has(id) ? viewOf(records.get(id) as JobRecord) : undefined))
      .filter((v): v is JobView => v !== undefined);
  }

  /** Where a job's owner answers: here, at another replica's address, or nowhere now (not taken, or ended). */
  async locate(id: string): Promise<JobPlace> {
    if (this.jobs.get(id)) return { kind: 'here' };
    const [record] = await this.store.find([id]);
    const owner = record?.owner && this.owner.replicas().find((r) => r.replicaId === record.owner);
    if (record?.status === 'running' && record.taken && owner && owner.replicaId !== this.owner.replicaId)
      return { kind: 'owner', url: owner.url };
    return { kind: 'nowhere', ...(record && { record }) };
  }

  /** Asks a job nobody answers for here to stop: whoever runs it next ends it `stopped`. */
  async requestStop(id: string): Promise<JobView | undefined> {
    const record = await this.store.requestStop(id);
    return record && viewOf(record);
  }

  async capacity(): Promise<Capacity> {
    const replicas = await this.store.replicas();
    return {
      slots: totalCapacity(replicas),
      running: replicas.reduce((n, r) => n + r.jobs, 0),
      replicas: replicas.filter((r) => !r.draining).length,
    };
  }
}
