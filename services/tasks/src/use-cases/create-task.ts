/**
 * Creating a video task (SPEC.md 4.1, 4.2): replay of an earlier create with the same key, admission
 * (maintenance switch, breaker, active-task limit, fair share of the inference slots), charge,
 * submission or a place in the queue of file tasks. Any refusal leaves no task and
 * no charge behind.
 */
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  type Identity,
  REASON,
  awaitFirstRequest,
  idempotencyInProgress,
  idempotencyMismatch,
  recordBreakerRefusal,
} from '@vision/shared';
import type { TaskContext } from '../ports';
import type { NewVideoTask, TaskRow } from '../store/task-store';
import { planAdmission } from './slot-admission';
import { submitTask, undo } from './submission';

export interface Admission {
  status: 200 | 201 | 202;
  task: TaskRow;
  headers: Record<string, string>;
  replayed: boolean;
}

export type NewTask = Omit<NewVideoTask, 'task_id' | 'subject' | 'request_id'>;

export class CreateTask {
  private maintenance: boolean;

  constructor(private readonly ctx: TaskContext) {
    this.maintenance = ctx.settings.maintenance;
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
    if (this.ctx.inference.isOpen()) {
      recordBreakerRefusal('inference');
      throw new ApiError(
        'OP-TASK-BREAKER-OPEN',
        'The inference backend is failing; new tasks are not accepted for now',
        { reason: REASON.breaker_open },
      );
    }
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
   * The replay of an earlier create with this key: the original task once it has left `submitting`
   * (waiting a bounded time for that, then 503 in_progress), OP-TASK-REQUEST-INVALID on another
   * meaning, undefined when the key is unused (or its first use was discarded).
   */
  async replay(subject: string, key: string, fingerprint: string): Promise<Admission | undefined> {
    const rec = await this.ctx.store.findIdempotency(subject, key);
    if (!rec) return undefined;
    if (rec.fingerprint !== fingerprint) throw idempotencyMismatch();
    // Settled once the first request's task has left `submitting` (or was discarded: key free again).
    const { task } = await awaitFirstRequest(
      async () => {
        const t = await this.ctx.store.get(rec.task_id);
        return !t || t.status !== 'submitting' || t.queued_at ? { task: t } : undefined;
      },
      {
        waitMs: this.ctx.settings.idempotencyWaitMs,
        onTimeout: () => {
          throw idempotencyInProgress();
        },
      },
    );
    if (!task) return undefined;
    return { status: 200, task, headers: {}, replayed: true };
  }

  /** Creates, charges and submits a task; any refusal leaves no task and no charge behind. */
  async admit(
    identity: Identity,
    idem: { key: string; fingerprint: string },
    t: NewTask,
  ): Promise<Admission> {
    const { store, settings, inflight } = this.ctx;
    for (let attempt = 0; attempt < 5; attempt++) {
      const taskId = randomUUID();
      const outcome = await store.insertSubmitting(
        { ...t, task_id: taskId, subject: identity.subject, request_id: idem.key },
        idem,
        settings.maxActive,
      );
      if (outcome.kind === 'too_many_active') throw this.tooManyActive(outcome.active);
      if (outcome.kind === 'exists') {
        const r = await this.replay(identity.subject, idem.key, idem.fingerprint);
        if (r) return r;
        continue; // the first request was discarded meanwhile: try again as a new one
      }
      inflight.add(taskId);
      try {
        return await this.chargeAndSubmit(identity, outcome.task);
      } finally {
        inflight.delete(taskId);
      }
    }
    throw new ApiError('OP-SYS-UNAVAILABLE', 'Could not settle this request, retry later');
  }

  private async chargeAndSubmit(identity: Identity, task: TaskRow): Promise<Admission> {
    const { store, quota } = this.ctx;
    let plan;
    try {
      plan = await planAdmission(this.ctx, task);
    } catch (err) {
      await store.discard(task.task_id);
      throw err;
    }
    const charge = await quota.charge(identity, task.task_id);
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
