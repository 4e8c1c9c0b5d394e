import type { ServiceClient } from '@vision/shared';
import { type Identity, UnreachableError } from '@vision/shared';
import type { ResultsSummary } from '../domain/results';

export interface ImageTaskRecord {
  task_id: string;
  request_id: string;
  scene_code: string;
  status: 'succeeded';
  results_summary: ResultsSummary;
}

/** Writes the task record of an image call (docs/INTERNAL.md, tasks: POST /internal/v1/image-tasks). */
export class TasksClient {
  constructor(
    private readonly client: ServiceClient,
    private readonly attempts = 3,
    private readonly backoffMs = 200,
  ) {}

  /** True when the record was written (201, or 200 for a repeat); false when tasks could not take it. */
  async writeImageTask(identity: Identity, record: ImageTaskRecord): Promise<boolean> {
    for (let i = 0; i < this.attempts; i++) {
      try {
        const r = await this.client.call('/internal/v1/image-tasks', { identity, json: record });
        if (r.status === 200 || r.status === 201) return true;
        // 409: a record with this task id exists already (a retry after a lost answer).
        if (r.status === 409) return true;
        if (r.status < 500) return false;
      } catch (err) {
        if (!(err instanceof UnreachableError)) throw err;
      }
      if (i < this.attempts - 1) await new Promise((res) => setTimeout(res, this.backoffMs * (i + 1)));
    }
    return false;
  }
}
