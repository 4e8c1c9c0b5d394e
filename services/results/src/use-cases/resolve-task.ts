import {
  ApiError,
  UnreachableError,
  type Clock,
  type Identity,
  type Logger,
  type ServiceClient,
} from '@vision/shared';
import { internalTaskSchema } from '../domain/messages';
import type { TaskRecord, TasksStore } from '../store/tasks-store';

/** Task ids results will look up; anything else cannot be a task and answers 404 without a lookup. */
const TASK_ID_RE = /^[A-Za-z0-9._:-]{1,200}$/;

export const isPlausibleTaskId = (id: string): boolean => TASK_ID_RE.test(id);

/**
 * What results knows about a task, from its task events; when a read arrives before the first event,
 * from the tasks service (GET /internal/v1/tasks/{id}, on behalf of the caller), cached in the store.
 * Concurrent reads of the same unknown task share one fetch.
 */
export class TaskResolver {
  private readonly inFlight = new Map<string, Promise<boolean>>();

  constructor(
    private readonly tasks: TasksStore,
    private readonly tasksClient: ServiceClient,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly fetchTimeoutMs = 5_000,
  ) {}

  /** The task's record with its meta, or undefined when no such task exists. */
  async resolve(
    taskId: string,
    identity: Identity,
  ): Promise<(TaskRecord & Required<Pick<TaskRecord, 'meta'>>) | undefined> {
    if (!isPlausibleTaskId(taskId)) return undefined;
    let rec = await this.tasks.get(taskId);
    if (!rec?.meta) {
      // Tasks answers a lookup for its caller's subject only: lookups of one task are shared per subject.
      const key = `${identity.subject}\u0000${taskId}`;
      let pending = this.inFlight.get(key);
      if (!pending) {
        pending = this.fetchAndCache(taskId, identity).finally(() => this.inFlight.delete(key));
        this.inFlight.set(key, pending);
      }
      if (!(await pending)) return undefined;
      rec = await this.tasks.get(taskId);
    }
    return rec?.meta ? { ...rec, meta: rec.meta } : undefined;
  }

  /** Fetches the task from the tasks service and stores its meta; false when tasks does not know it. */
  private async fetchAndCache(taskId: string, identity: Identity): Promise<boolean> {
    let res;
    try {
      res = await this.tasksClient.call(`/internal/v1/tasks/${encodeURIComponent(taskId)}`, {
        identity,
        timeoutMs: this.fetchTimeoutMs,
      });
    } catch (err) {
      if (err instanceof UnreachableError)
        throw new ApiError('OP-SYS-UNAVAILABLE', 'A dependency is unavailable (tasks), retry later');
      throw err;
    }
    if (res.status === 404) return false;
    if (res.status !== 200) {
      this.logger.warn({ task_id: taskId, status: res.status }, 'tasks answered a task lookup with an error');
      throw new ApiError('OP-SYS-UNAVAILABLE', 'A dependency is unavailable (tasks), retry later');
    }
    const parsed = internalTaskSchema.safeParse(res.body);
    if (!parsed.success || parsed.data.task_id !== taskId) {
      this.logger.error({ task_id: taskId }, 'tasks answered a task lookup with an unexpected body');
      throw new ApiError('OP-SYS-UNAVAILABLE', 'A dependency answered unexpectedly (tasks), retry later');
    }
    const t = parsed.data;
    const now = this.clock.now();
    await this.tasks.upsertMeta(
      {
        taskId,
        subject: t.subject,
        kind: t.kind,
        sceneCode: t.scene_code,
        status: t.status,
        businessThreshold: t.business_threshold,
        lowerBound: t.lower_bound,
        resultExpiresAt: new Date(t.result_expires_at),
        statusAt: now,
        source: 'fetch',
      },
      now,
    );
    return true;
  }
}
