/**
 * Creating a video task (SPEC.md 4.1, 4.2): the Idempotency-Key's claim (create-claims.ts), admission
 * (maintenance switch, breaker, active-task limit, fair share of the inference slots), charge,
 * submission or a place in the queue of file tasks. Any refusal leaves no task and
 * no charge behind.
 */
import { ApiError, type ClaimRecord, type Identity, type OwnedClaim, REASON } from '@vision/shared';
import type { TaskContext } from '../ports';
import type { NewVideoTask, TaskRow } from '../store/task-store';
import { type CreateClaims, createClaims, finishCreate } from './create-claims';
import { planAdmission } from './slot-admission';
import { submitTask, undo } from './submission';

export interface Admission {
  status: 200 | 201 | 202;
  task: TaskRow;
  headers: Record<string, string>;
  replayed: boolean;
}

export type NewTask = Omit<NewVideoTask, 'task_id' | 'subject' | 'request_id'>;

/** What may stop a create early: its caller went away or its deadline passed (callSignal), and that deadline. */
export interface CreateControl {
  /** Aborted with the reason the create stops; checked before the charge. */
  signal?: AbortSignal;
  /** The caller's deadline (epoch ms), carried by the charge. */
  deadline?: number;
}

export class CreateTask {
  private maintenance: boolean;
  private readonly claims: CreateClaims;

  constructor(private readonly ctx: TaskContext) {
    this.maintenance = ctx.settings.maintenance;
    this.claims = createClaims(ctx);
  }

  setMaintenance(on: boolean): void {
    this.maintenance = on;
    this.ctx.logger.warn({ maintenance: on }, 'maintenance switch changed');
  }

  isMaintenance(): boolean {
    return this.maintenance;
  }

  /** 503 OP-TASK-BREAKER-OPEN while the maintenance switch is on or the backend breaker is open. */
  assertAcceptingNewTasks(): void {
    if (this.maintenance)
      throw new ApiError(
        'OP-TASK-BREAKER-OPEN',
        'The service is under maintenance; new tasks are not accepted',
        {
          reason: REASON.maintenance,
        },
      );
    // With Retry-After: the time left until the breaker's probe call.
    if (this.ctx.inference.isOpen()) throw this.ctx.inference.breakerRefusal('new tasks');
  }

  async assertActiveRoom(subject: string): Promise<void> {
    const n = await this.ctx.store.countActive(subject);
    if (n >= this.ctx.settings.maxActive) throw this.tooManyActive(n);
  }

  private tooManyActive(active: number): ApiError {
    const limit = this.ctx.settings.maxActive;
    return new ApiError(
      'OP-QUOTA-RATE-LIMITED',
      `At most ${limit} active tasks per key; stop or wait for one`,
      { reason: REASON.active_tasks, limit, active },
      { 'Retry-After': '5' },
    );
  }

  /**
   * Creates a task under its Idempotency-Key through the shared claim mechanism: a duplicate waits for
   * the first request (at most TASKS_IDEMPOTENCY_WAIT_MS, then 503 in_progress) and answers 200 with its
   * task once that left `submitting`; another meaning under the key is 400 idempotency_mismatch. Only
   * the request that owns the claim runs `prepare` (the request's checks: scene, stream probe, ...) and
   * then admits the task it gives; any refusal before the charge frees the key. A create whose caller
   * has gone or whose deadline passed stops before the charge, leaving nothing behind (docs/OVERLOAD.md).
   */
  create(
    identity: Identity,
    idem: { key: string; fingerprint: string; earlierFingerprints?: readonly string[] } & CreateControl,
    prepare: () => Promise<NewTask>,
  ): Promise<Admission> {
    const control: CreateControl = { signal: idem.signal, deadline: idem.deadline };
    return this.claims.handle(
      {
        subject: identity.subject,
        key: idem.key,
        fingerprint: idem.fingerprint,
        earlierFingerprints: idem.earlierFingerprints,
        data: {},
      },
      {
        run: async (owned) => {
          let t: NewTask;
          try {
            t = await prepare();
            if (control.signal?.aborted) throw control.signal.reason;
          } catch (err) {
            await owned.release();
            throw err;
          }
          return this.admit(identity, owned, t, control);
        },
        replay: (claim) => this.replayOf(claim),
        finish: (claim) => finishCreate(this.ctx, claim),
      },
    );
  }

  /** The first request's answer: its task once it has left `submitting` or joined the queue. */
  private async replayOf(claim: ClaimRecord): Promise<Admission | undefined> {
    const task = await this.ctx.store.get(claim.taskId);
    if (!task || (task.status === 'submitting' && !task.queued_at)) return undefined;
    return { status: 200, task, headers: {}, replayed: true };
  }

  /** Writes, charges and submits the claim's task; any refusal leaves no task and no charge behind. */
  private async admit(
    identity: Identity,
    owned: OwnedClaim<ClaimRecord>,
    t: NewTask,
    control: CreateControl,
  ): Promise<Admission> {
    const { store, settings, inflight, streamUrls } = this.ctx;
    const outcome = await store.insertSubmitting(
      {
        ...t,
        task_id: owned.taskId,
        subject: identity.subject,
        request_id: owned.ref.key,
        stream_url: t.stream_url === undefined ? undefined : streamUrls.seal(t.stream_url),
      },
      owned.ref,
      settings.maxActive,
    );
    if (outcome.kind === 'too_many_active') {
      await owned.release();
      throw this.tooManyActive(outcome.active);
    }
    if (outcome.kind === 'lost')
      throw new ApiError(
        'OP-SYS-UNAVAILABLE',
        'The request was interrupted; retry with the same Idempotency-Key',
      );
    inflight.add(owned.taskId);
    try {
      const admission = await this.chargeAndSubmit(identity, outcome.task, control);
      await store.claims.markCompleted(owned.ref);
      return admission;
    } finally {
      inflight.delete(owned.taskId);
    }
  }

  private async chargeAndSubmit(
    identity: Identity,
    task: TaskRow,
    control: CreateControl,
  ): Promise<Admission> {
    const { store, quota } = this.ctx;
    let plan;
    try {
      plan = await planAdmission(this.ctx, task);
      // The last moment to drop a create whose caller has gone or whose deadline passed: nothing is charged yet.
      if (control.signal?.aborted) throw control.signal.reason;
    } catch (err) {
      await store.discard(task.task_id);
      throw err;
    }
    const charge = await quota.charge(identity, task.task_id, control.deadline);
    if (charge.kind === 'exhausted') {
      await store.discard(task.task_id);
      throw new ApiError(charge.error.code, charge.error.message, charge.error.details, charge.headers);
    }
    if (charge.kind === 'unavailable') {
      await undo(this.ctx, identity, task, charge.maybeCharged);
      throw new ApiError('OP-SYS-UNAVAILABLE', 'The quota service is unavailable, retry later');
    }
    if (charge.kind === 'refunded') {
      // Not charged (its id was refunded already): never submitted for free.
      await store.discard(task.task_id);
      throw new ApiError('OP-SYS-UNAVAILABLE', 'Could not settle this request, retry later');
    }
    if (plan === 'queue') {
      const queued = (await store.enqueue(task.task_id)) ?? task;
      return { status: 201, task: queued, headers: charge.headers, replayed: false };
    }
    const context = task.source_type === 'file' ? 'file_request' : 'request';
    const settled = await submitTask(this.ctx, identity, task, context);
    return { status: settled.status, task: settled.task, headers: charge.headers, replayed: false };
  }
}
