/**
 * In-memory fakes of the tasks service's application ports (src/ports.ts), so that use-case tests
 * need neither HTTP nor a sibling service: the store is the real knex store over in-memory PGlite.
 */
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  REASON,
  type Identity,
  type JobSource,
  type JobStill,
  type JobView,
  type SubmitOutcome,
  createLogger,
  type Db,
  FakeClock,
  openDb,
} from '@vision/shared';
import type { ChargeOutcome } from '../src/clients/quota-client';
import type { InferencePort, QuotaPort, Signals, TaskContext, TaskSettings } from '../src/ports';
import { migrations } from '../src/store/migrations';
import { StreamUrlSeal } from '../src/store/stream-url-seal';
import { type NewVideoTask, TaskStore } from '../src/store/task-store';
import { driveStops } from '../src/workers/stop-driver';

export class FakeQuota implements QuotaPort {
  readonly charged = new Set<string>();
  readonly refunded = new Set<string>();
  next: ChargeOutcome['kind'] = 'charged';
  refundWorks = true;

  async charge(_identity: Identity, id: string): Promise<ChargeOutcome> {
    if (this.refunded.has(id)) return { kind: 'refunded' };
    if (this.next === 'charged') {
      this.charged.add(id);
      return { kind: 'charged', day: '2026-01-01', headers: {} };
    }
    if (this.next === 'unavailable') return { kind: 'unavailable', maybeCharged: false };
    if (this.next === 'refunded') return { kind: 'refunded' };
    return { kind: 'exhausted', error: new ApiError('OP-QUOTA-DAILY-EXHAUSTED', 'used up'), headers: {} };
  }

  async refund(_identity: Identity, id: string): Promise<boolean> {
    if (!this.refundWorks) return false;
    if (this.charged.delete(id)) this.refunded.add(id);
    return true;
  }
}

export class FakeInference implements InferencePort {
  readonly jobs = new Map<string, JobView>();
  /** The source of every job submitted, by job id. */
  readonly sources = new Map<string, JobSource>();
  submitAnswer: SubmitOutcome['kind'] | 'breaker_open' = 'accepted';
  open = false;

  async submit(
    _identity: Identity,
    job: { job_id: string; scene_code: string; source: JobSource },
  ): Promise<SubmitOutcome> {
    this.sources.set(job.job_id, job.source);
    switch (this.submitAnswer) {
      case 'accepted': {
        const view: JobView = { job_id: job.job_id, scene_code: job.scene_code, status: 'running' };
        this.jobs.set(job.job_id, view);
        return { kind: 'accepted', job: view };
      }
      case 'rejected':
        return { kind: 'rejected', reason: 'source_unusable' };
      case 'over_capacity':
        return { kind: 'over_capacity' };
      case 'not_delivered':
        return { kind: 'not_delivered', breakerOpen: false };
      case 'breaker_open':
        return { kind: 'not_delivered', breakerOpen: true };
      case 'unknown':
        return { kind: 'unknown', detail: 'timed out' };
    }
  }
  async getJob(_i: Identity, id: string) {
    return this.jobs.get(id) ?? null;
  }
  async getJobs(_i: Identity, ids: string[]) {
    return new Map(ids.flatMap((id) => (this.jobs.has(id) ? [[id, this.jobs.get(id)!] as const] : [])));
  }
  async stopJob(_i: Identity, id: string) {
    const job = this.jobs.get(id);
    if (job && job.status === 'running') job.status = 'stopped';
    return job ?? null;
  }
  /** The pictures `still()` answers, by job id (a running job without one answers null). */
  readonly stills = new Map<string, JobStill>();
  async still(_i: Identity, id: string) {
    return this.jobs.get(id)?.status === 'running' ? (this.stills.get(id) ?? null) : null;
  }
  isOpen() {
    return this.open;
  }
  state() {
    return this.open ? ('open' as const) : ('closed' as const);
  }
  breakerRefusal(what: string) {
    return new ApiError(
      'OP-TASK-BREAKER-OPEN',
      `The inference backend is failing; ${what} are not accepted for now`,
      { reason: REASON.breaker_open },
      { 'Retry-After': '30' },
    );
  }
}

export const SETTINGS: TaskSettings = {
  maxActive: 3,
  inferenceSlots: 100,
  queueMax: 100,
  queueMaxWaitMs: 3_600_000,
  maintenance: false,
  idempotencyWaitMs: 200,
  resolveGraceMs: 1000,
  jobRestarts: 3,
  recoverAfterMs: 1000,
  stopWaitMs: 200,
  pollIntervalMs: 60_000,
  reconcileIntervalMs: 60_000,
  janitorIntervalMs: 60_000,
};

export interface FakeWorld {
  ctx: TaskContext;
  db: Db;
  quota: FakeQuota;
  inference: FakeInference;
  clock: FakeClock;
  deleted: string[];
  events: number;
}

/** A task context over in-memory PGlite and the fakes above. */
export async function fakeWorld(settings: Partial<TaskSettings> = {}): Promise<FakeWorld> {
  const logger = createLogger('tasks-test', { level: 'silent' });
  const db = await openDb(
    { VISION_MODE: 'standalone', DATABASE_URL: undefined, VISION_DATA_DIR: ':memory:' },
    { schema: 'tasks', migrations, logger },
  );
  const clock = new FakeClock(new Date());
  const quota = new FakeQuota();
  const inference = new FakeInference();
  const deleted: string[] = [];
  const world: FakeWorld = {
    ctx: undefined as unknown as TaskContext,
    db,
    quota,
    inference,
    clock,
    deleted,
    events: 0,
  };
  const signals: Signals = {
    eventsWritten: () => void (world.events += 1),
    driveStops: () => driveStops(world.ctx),
  };
  world.ctx = {
    store: new TaskStore(db.knex, clock),
    quota,
    inference,
    objects: { delete: async (keys: string[]) => void deleted.push(...keys) },
    clock,
    logger,
    settings: { ...SETTINGS, ...settings },
    signals,
    inflight: new Set(),
    streamUrls: new StreamUrlSeal('tasks-test-stream-url-key'),
  };
  return world;
}

/**
 * What a create whose process died after writing its task leaves behind: its Idempotency-Key claim
 * (settling, lease ending at `leaseUntil`) and the task, `submitting`. Returns the task id.
 */
export async function plantCreate(
  store: TaskStore,
  t: Omit<NewVideoTask, 'task_id' | 'request_id'> & { task_id?: string },
  claim: { key?: string; fingerprint?: string; leaseUntil: Date },
): Promise<string> {
  const key = claim.key ?? randomUUID();
  const taskId = t.task_id ?? randomUUID();
  const ref = { subject: t.subject, key, taskId, attempt: 0 };
  const fresh = { ...ref, fingerprint: claim.fingerprint ?? 'fp', createdAt: claim.leaseUntil };
  if (!(await store.claims.claim({ ...fresh, leaseUntil: claim.leaseUntil }))) throw new Error('key in use');
  const ins = await store.insertSubmitting({ ...t, task_id: taskId, request_id: key }, ref, 100);
  if (ins.kind !== 'created') throw new Error(`not created: ${ins.kind}`);
  return taskId;
}
