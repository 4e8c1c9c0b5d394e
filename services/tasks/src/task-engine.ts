/**
 * What happens to video tasks: admission (idempotency, active limit, charge, submission), the moves
 * that follow the backend (poller, stop worker, reconciler of `resolving`, recovery of `submitting`
 * left by a crash), refunds and retention. HTTP lives in routes/, SQL in store/.
 */
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  type Bus,
  type Clock,
  type Identity,
  type Logger,
  type ObjectStore,
  invalidRequest,
  recordBreakerRefusal,
} from '@vision/shared';
import type { InferenceClient, JobSource, JobView } from './clients/inference-client';
import type { QuotaClient } from './clients/quota-client';
import { type TaskStatus, stopDecision, triggerForJobStatus } from './domain/state-machine';
import type { NewVideoTask, TaskRow, TaskStore } from './store/task-store';
import { Periodic } from './workers/periodic';

export interface EngineSettings {
  maxActive: number;
  maintenance: boolean;
  idempotencyWaitMs: number;
  resolveGraceMs: number;
  recoverAfterMs: number;
  stopWaitMs: number;
  pollIntervalMs: number;
  reconcileIntervalMs: number;
  janitorIntervalMs: number;
}

export interface Admission {
  status: 200 | 201 | 202;
  task: TaskRow;
  headers: Record<string, string>;
  replayed: boolean;
}

/** Refund reasons of resolving tasks settled as not created (their job may still appear late). */
const NOT_CREATED_REASONS = ['backend_has_no_job', 'verified_not_created'];
/** How long after such a refund the reconciler still looks for a late job to stop. */
const LATE_JOB_WINDOW_MS = 10 * 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function workerIdentity(subject: string): Identity {
  return { subject, requestId: `tasks-worker-${randomUUID()}` };
}

export class TaskEngine {
  /** Tasks whose create request is being handled by this process: background loops leave them alone. */
  private readonly inflight = new Set<string>();
  private maintenance: boolean;
  readonly poller: Periodic;
  readonly stopper: Periodic;
  readonly reconciler: Periodic;
  readonly janitor: Periodic;
  readonly outbox: Periodic;

  constructor(
    private readonly store: TaskStore,
    private readonly quota: QuotaClient,
    readonly inference: InferenceClient,
    private readonly objects: ObjectStore,
    private readonly bus: Bus,
    private readonly clock: Clock,
    private readonly settings: EngineSettings,
    private readonly logger: Logger,
  ) {
    this.maintenance = settings.maintenance;
    this.poller = new Periodic('poller', settings.pollIntervalMs, () => this.pollJobs(), logger);
    this.stopper = new Periodic('stopper', settings.pollIntervalMs, () => this.driveStops(), logger);
    this.reconciler = new Periodic(
      'reconciler',
      settings.reconcileIntervalMs,
      async () => {
        await this.reconcileResolving();
        await this.recoverSubmitting();
        await this.retryRefunds();
        await this.stopLateJobs();
      },
      logger,
    );
    this.janitor = new Periodic(
      'janitor',
      settings.janitorIntervalMs,
      async () => {
        await this.expireTasks();
      },
      logger,
    );
    this.outbox = new Periodic('outbox', 500, () => this.publishOutbox(), logger);
  }

  startWorkers(): void {
    for (const w of [this.poller, this.stopper, this.reconciler, this.janitor, this.outbox]) w.start();
  }

  async stopWorkers(): Promise<void> {
    await Promise.all(
      [this.poller, this.stopper, this.reconciler, this.janitor, this.outbox].map((w) => w.stop()),
    );
  }

  // ---- maintenance and breaker -------------------------------------------------------------

  setMaintenance(on: boolean): void {
    this.maintenance = on;
    this.logger.warn({ maintenance: on }, 'maintenance switch changed');
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
          reason: 'maintenance',
        },
      );
    if (this.inference.isOpen()) {
      recordBreakerRefusal('inference');
      throw new ApiError(
        'OP-TASK-BREAKER-OPEN',
        'The inference backend is failing; new tasks are not accepted for now',
        {
          reason: 'breaker_open',
        },
      );
    }
  }

  // ---- admission ---------------------------------------------------------------------------

  async assertActiveRoom(subject: string): Promise<void> {
    const n = await this.store.countActive(subject);
    if (n >= this.settings.maxActive) throw this.tooManyActive(n);
  }

  private tooManyActive(active: number): ApiError {
    return new ApiError(
      'OP-QUOTA-RATE-LIMITED',
      `At most ${this.settings.maxActive} active tasks per key; stop or wait for one`,
      { reason: 'active_tasks', limit: this.settings.maxActive, active },
      { 'Retry-After': '5' },
    );
  }

  /**
   * The replay of an earlier create with this key: the original task (once it has left `submitting`,
   * waiting a bounded time for that), OP-TASK-REQUEST-INVALID on another meaning, undefined when the
   * key is unused (or its first use was discarded).
   */
  async replay(subject: string, key: string, fingerprint: string): Promise<Admission | undefined> {
    const rec = await this.store.findIdempotency(subject, key);
    if (!rec) return undefined;
    if (rec.fingerprint !== fingerprint)
      throw invalidRequest(
        'This Idempotency-Key was used for a different request; use a new key for a new request',
        'idempotency_mismatch',
      );
    const deadline = Date.now() + this.settings.idempotencyWaitMs;
    for (;;) {
      const task = await this.store.get(rec.task_id);
      if (!task) return undefined;
      if (task.status !== 'submitting' || Date.now() >= deadline)
        return { status: 200, task, headers: {}, replayed: true };
      await sleep(50);
    }
  }

  /** Creates, charges and submits a task; any refusal leaves no task and no charge behind. */
  async admit(
    identity: Identity,
    idem: { key: string; fingerprint: string },
    t: Omit<NewVideoTask, 'task_id' | 'subject' | 'request_id'>,
  ): Promise<Admission> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const taskId = randomUUID();
      const outcome = await this.store.insertSubmitting(
        { ...t, task_id: taskId, subject: identity.subject, request_id: idem.key },
        idem,
        this.settings.maxActive,
      );
      if (outcome.kind === 'too_many_active') throw this.tooManyActive(outcome.active);
      if (outcome.kind === 'exists') {
        const r = await this.replay(identity.subject, idem.key, idem.fingerprint);
        if (r) return r;
        continue; // the first request was discarded meanwhile: try again as a new one
      }
      this.inflight.add(taskId);
      try {
        return await this.chargeAndSubmit(identity, outcome.task);
      } finally {
        this.inflight.delete(taskId);
      }
    }
    throw new ApiError('OP-SYS-UNAVAILABLE', 'Could not settle this request, retry later');
  }

  private async chargeAndSubmit(identity: Identity, task: TaskRow): Promise<Admission> {
    const charge = await this.quota.charge(identity, task.task_id);
    if (charge.kind === 'exhausted') {
      await this.store.discard(task.task_id);
      throw new ApiError(charge.error.code, charge.error.message, charge.error.details, charge.headers);
    }
    if (charge.kind === 'unavailable') {
      await this.undo(identity, task, charge.maybeCharged);
      throw new ApiError('OP-SYS-UNAVAILABLE', 'The quota service is unavailable, retry later');
    }
    if (charge.kind === 'refunded') {
      // Not charged (its id was refunded already): never submitted for free.
      await this.store.discard(task.task_id);
      throw new ApiError('OP-SYS-UNAVAILABLE', 'Could not settle this request, retry later');
    }
    const settled = await this.submit(identity, task, 'request');
    const status = settled.status === 'resolving' ? 202 : 201;
    return { status, task: settled, headers: charge.headers, replayed: false };
  }

  /** Takes back a task the caller is told failed: refund (when charged) and discard, or leave it to recovery. */
  private async undo(identity: Identity, task: TaskRow, charged: boolean): Promise<void> {
    if (charged && !(await this.quota.refund(identity, task.task_id).catch(() => false))) {
      await this.store.markAbandoned(task.task_id);
      return;
    }
    await this.store.discard(task.task_id);
  }

  private sourceOf(task: TaskRow): JobSource {
    return task.source_type === 'file'
      ? { type: 'object', key: String(task.object_key) }
      : { type: 'stream', url: String(task.stream_url) };
  }

  /**
   * Submits a charged `submitting` task. From a request, an undelivered submission is undone and
   * answered 503; from recovery (no caller waiting) it is refunded and the task ends `refunded`.
   */
  private async submit(identity: Identity, task: TaskRow, from: 'request' | 'recovery'): Promise<TaskRow> {
    const out = await this.inference.submit(identity, {
      job_id: task.task_id,
      scene_code: task.scene_code,
      source: this.sourceOf(task),
    });
    switch (out.kind) {
      case 'accepted': {
        const moved = await this.store.move(task.task_id, 'submission_accepted');
        if (!moved) return (await this.store.get(task.task_id)) ?? task;
        return this.afterRunning(moved, out.job);
      }
      case 'rejected':
        return this.refundAndMove(
          task,
          'submission_rejected',
          `backend_rejected: ${out.reason}`.slice(0, 250),
        );
      case 'unknown':
        this.logger.warn(
          { task_id: task.task_id, detail: out.detail },
          'submission outcome unknown; task resolving',
        );
        return (await this.store.move(task.task_id, 'submission_unknown')) ?? task;
      case 'over_capacity':
      case 'not_delivered': {
        const breaker = out.kind === 'not_delivered' && out.breakerOpen;
        if (from === 'recovery')
          return this.refundAndMove(
            task,
            'submission_rejected',
            breaker ? 'breaker_open' : 'backend_unavailable',
          );
        await this.undo(identity, task, true);
        if (breaker)
          throw new ApiError(
            'OP-TASK-BREAKER-OPEN',
            'The inference backend is failing; new tasks are not accepted for now',
            {
              reason: 'breaker_open',
            },
          );
        throw new ApiError(
          'OP-TASK-UPSTREAM-DOWN',
          out.kind === 'over_capacity'
            ? 'The inference backend is at capacity, retry later'
            : 'The inference backend is unavailable, retry later',
          undefined,
          { 'Retry-After': '10' },
        );
      }
    }
  }

  /** After a task becomes running: a job already ended moves on; a stop asked for earlier is carried out. */
  private async afterRunning(task: TaskRow, job?: JobView): Promise<TaskRow> {
    let cur = task;
    const trigger = job ? triggerForJobStatus(job.status) : undefined;
    if (trigger) cur = (await this.store.move(task.task_id, trigger, { reason: job?.reason ?? null })) ?? cur;
    else if (cur.stop_requested) {
      cur = (await this.store.move(task.task_id, 'stop_requested')) ?? cur;
      void this.stopper.kick();
    }
    void this.outbox.kick();
    return cur;
  }

  private async refundAndMove(
    task: TaskRow,
    trigger: 'submission_rejected' | 'verified_not_created',
    reason: string,
  ): Promise<TaskRow> {
    const refunded = await this.quota.refund(workerIdentity(task.subject), task.task_id).catch(() => false);
    const moved = await this.store.move(task.task_id, trigger, { reason, refund_pending: !refunded });
    // A slow backend may still create the job of a resolving task: stop it (idempotent; 404 is fine).
    if (trigger === 'verified_not_created')
      await this.inference.stopJob(workerIdentity(task.subject), task.task_id).catch(() => null);
    void this.outbox.kick();
    return moved ?? (await this.store.get(task.task_id)) ?? task;
  }

  // ---- operator verification and the reconciler --------------------------------------------

  /** Manual verification of a resolving task (SPEC.md 3). */
  async verify(taskId: string, created: boolean): Promise<TaskRow> {
    const task = await this.store.get(taskId);
    if (!task || task.kind !== 'video') throw new ApiError('OP-NOT-FOUND', 'No such task');
    if (task.status !== 'resolving')
      throw new ApiError('OP-TASK-REQUEST-INVALID', `Task is ${task.status}, not resolving`, {
        reason: 'not_resolving',
        status: task.status,
      });
    if (created) {
      const moved = await this.store.move(taskId, 'verified_created');
      return moved ? this.afterRunning(moved) : ((await this.store.get(taskId)) ?? task);
    }
    return this.refundAndMove(task, 'verified_not_created', 'verified_not_created');
  }

  /**
   * A move made for one task of a background round (poll, stop, reconcile): a failed write is logged and
   * left for the next round, never aborting the round for the other tasks.
   */
  private isolatedMove(...args: Parameters<TaskStore['move']>): Promise<TaskRow | undefined> {
    return this.store.move(...args).catch((err: unknown) => this.writeFailed(args[0], err));
  }

  private writeFailed(taskId: string, err: unknown): undefined {
    this.logger.warn({ err, task_id: taskId }, 'task update failed; retried next round');
    return undefined;
  }

  async reconcileResolving(): Promise<void> {
    const tasks = await this.store.inStatus(['resolving'], 100);
    for (const task of tasks) {
      if (this.inflight.has(task.task_id)) continue;
      let job: JobView | null;
      try {
        job = await this.inference.getJob(workerIdentity(task.subject), task.task_id);
      } catch {
        continue; // backend unreachable: ask again next round
      }
      if (job) {
        const moved = await this.isolatedMove(task.task_id, 'verified_created');
        if (moved) await this.afterRunning(moved, job).catch((err) => this.writeFailed(task.task_id, err));
      } else if (this.clock.now().getTime() - task.updated_at.getTime() >= this.settings.resolveGraceMs) {
        await this.refundAndMove(task, 'verified_not_created', 'backend_has_no_job').catch((err) =>
          this.writeFailed(task.task_id, err),
        );
      }
    }
  }

  /** Tasks left `submitting` by a crash: charge again (idempotent), submit again (idempotent by job id). */
  async recoverSubmitting(): Promise<void> {
    const before = new Date(this.clock.now().getTime() - this.settings.recoverAfterMs);
    const tasks = await this.store.inStatus(['submitting'], 50, before);
    for (const task of tasks) {
      if (this.inflight.has(task.task_id)) continue;
      this.inflight.add(task.task_id);
      try {
        const identity = workerIdentity(task.subject);
        if (task.abandoned) {
          if (await this.quota.refund(identity, task.task_id).catch(() => false)) {
            await this.store.discard(task.task_id);
            // Its upload was kept while the row referred to it.
            if (task.object_key) await this.objects.delete([task.object_key]).catch(() => undefined);
          }
          continue;
        }
        const charge = await this.quota.charge(identity, task.task_id);
        if (charge.kind === 'exhausted') {
          await this.store.move(task.task_id, 'submission_rejected', { reason: 'quota_exhausted' });
          continue;
        }
        if (charge.kind === 'unavailable') continue;
        if (charge.kind === 'refunded') {
          // Its charge was refunded (e.g. a crash after the refund): it must not run for free.
          await this.store.move(task.task_id, 'submission_rejected', { reason: 'charge_refunded' });
          void this.outbox.kick();
          continue;
        }
        await this.submit(identity, task, 'recovery');
      } catch (err) {
        this.logger.warn({ err, task_id: task.task_id }, 'recovery of a submitting task failed; will retry');
      } finally {
        this.inflight.delete(task.task_id);
      }
    }
  }

  /**
   * Stops jobs a slow backend created after their resolving task was refunded as not created (for
   * LATE_JOB_WINDOW_MS after the refund): nobody pays for them and nobody would stop them otherwise.
   */
  async stopLateJobs(): Promise<void> {
    const since = new Date(this.clock.now().getTime() - LATE_JOB_WINDOW_MS);
    const tasks = await this.store.refundedSince(NOT_CREATED_REASONS, since, 100);
    if (tasks.length === 0) return;
    let jobs: Map<string, JobView>;
    try {
      jobs = await this.inference.getJobs(
        workerIdentity('tasks-service'),
        tasks.map((t) => t.task_id),
      );
    } catch {
      return; // backend unreachable: ask again next round
    }
    for (const task of tasks) {
      if (jobs.get(task.task_id)?.status !== 'running') continue;
      this.logger.warn({ task_id: task.task_id }, 'stopping a job created after its task was refunded');
      await this.inference.stopJob(workerIdentity(task.subject), task.task_id).catch(() => null);
    }
  }

  async retryRefunds(): Promise<void> {
    for (const task of await this.store.refundsPending(50)) {
      if (await this.quota.refund(workerIdentity(task.subject), task.task_id).catch(() => false))
        await this.store
          .setRefundPending(task.task_id, false)
          .catch((err) => this.writeFailed(task.task_id, err));
    }
  }

  // ---- following the backend ---------------------------------------------------------------

  /** Moves running/stopping tasks after the jobs the backend reports. */
  async pollJobs(): Promise<void> {
    const tasks = await this.store.inStatus(['running', 'stopping'], 200);
    for (let i = 0; i < tasks.length; i += 100) {
      const batch = tasks.slice(i, i + 100);
      const jobs = await this.inference.getJobs(
        workerIdentity('tasks-service'),
        batch.map((t) => t.task_id),
      );
      for (const task of batch) {
        const job = jobs.get(task.task_id);
        if (!job) {
          // The backend lost the job (restarted without it): a running task cannot produce more results.
          if (task.status === 'running')
            await this.isolatedMove(task.task_id, 'job_failed', { reason: 'backend_lost_job' });
          else await this.isolatedMove(task.task_id, 'stop_confirmed');
          continue;
        }
        const trigger = triggerForJobStatus(job.status);
        if (trigger) await this.isolatedMove(task.task_id, trigger, { reason: job.reason ?? null });
      }
    }
    void this.outbox.kick();
  }

  /** Sends stops for every `stopping` task until the backend confirms (survives restarts: state is in the db). */
  async driveStops(): Promise<void> {
    const tasks = await this.store.inStatus(['stopping'], 100);
    for (const task of tasks) {
      let job: JobView | null;
      try {
        job = await this.inference.stopJob(workerIdentity(task.subject), task.task_id);
      } catch {
        continue;
      }
      if (!job || job.status === 'stopped') await this.isolatedMove(task.task_id, 'stop_confirmed');
      else {
        const trigger = triggerForJobStatus(job.status);
        if (trigger) await this.isolatedMove(task.task_id, trigger, { reason: job.reason ?? null });
      }
    }
    void this.outbox.kick();
  }

  /**
   * A caller's stop (SPEC.md 4.5). Running: stopping, then the stop worker; the answer waits up to
   * TASKS_STOP_WAIT_MS for `stopped`. Submitting/resolving: the stop is remembered and carried out
   * as soon as the task is running (202 with the current status). Ended: OP-TASK-NOT-STOPPABLE.
   */
  async stop(task: TaskRow): Promise<{ status: 200 | 202; task: TaskRow }> {
    const decision = stopDecision(task.status);
    if (decision === 'not_stoppable')
      throw new ApiError('OP-TASK-NOT-STOPPABLE', `Task has already ended (${task.status})`, {
        status: task.status,
      });
    if (decision === 'defer_until_running') {
      await this.store.setStopRequested(task.task_id);
      // It may have become running in between: carry the stop out now then.
      const cur = (await this.store.get(task.task_id)) ?? task;
      if (cur.status === 'running') return this.stop(cur);
      return { status: 202, task: cur };
    }
    if (decision === 'stop_now') await this.store.move(task.task_id, 'stop_requested');
    void this.outbox.kick();
    const deadline = Date.now() + this.settings.stopWaitMs;
    for (;;) {
      await this.stopper.kick();
      const cur = (await this.store.get(task.task_id)) ?? task;
      if (cur.status !== 'stopping' || Date.now() >= deadline) return { status: 200, task: cur };
      await sleep(Math.min(200, Math.max(0, deadline - Date.now())));
    }
  }

  // ---- retention and events ----------------------------------------------------------------

  /** Deletes expired tasks' uploaded videos and marks the tasks expired (results deletes frames itself). */
  async expireTasks(): Promise<number> {
    let n = 0;
    for (;;) {
      const tasks = await this.store.expiredUnmarked(this.clock.now(), 100);
      if (tasks.length === 0) return n;
      const keys = tasks.map((t) => t.object_key).filter((k): k is string => Boolean(k));
      if (keys.length) await this.objects.delete(keys);
      for (const t of tasks) await this.store.markExpired(t.task_id);
      n += tasks.length;
    }
  }

  async publishOutbox(): Promise<void> {
    for (;;) {
      const rows = await this.store.pendingEvents(100);
      if (rows.length === 0) return;
      const byTopic = new Map<string, { key: string; value: object; headers?: Record<string, string> }[]>();
      for (const r of rows) {
        const list = byTopic.get(r.topic) ?? [];
        list.push({ key: r.msg_key, value: r.value as object, headers: r.headers });
        byTopic.set(r.topic, list);
      }
      for (const [topic, messages] of byTopic) await this.bus.publish(topic, messages);
      await this.store.markPublished(rows.map((r) => r.id));
    }
  }

  /** Statuses a caller may filter the history by. */
  static readonly LISTABLE: TaskStatus[] = [
    'submitting',
    'resolving',
    'running',
    'stopping',
    'stopped',
    'succeeded',
    'failed',
    'refunded',
  ];
}
