/**
 * The fences of video tasks' jobs (job-fences-migration.ts): read for a batch of `vision.frames`, raised when a
 * batch brings a higher epoch. A fence never goes down.
 */
import type { Knex } from '@vision/shared';

export class JobFencesStore {
  constructor(private readonly knex: Knex) {}

  /** The fence of each task that has one. */
  async read(taskIds: readonly string[]): Promise<Map<string, number>> {
    if (taskIds.length === 0) return new Map();
    const rows = (await this.knex('job_fences').whereIn('task_id', [...taskIds])) as {
      task_id: string;
      epoch: number;
    }[];
    return new Map(rows.map((r) => [r.task_id, Number(r.epoch)]));
  }

  /** Raises each task's fence to at least its epoch, and counts the messages refused under it. */
  async raise(fences: ReadonlyMap<string, { epoch: number; refused: number }>): Promise<void> {
    if (fences.size === 0) return;
    const rows = [...fences].map(([taskId, f]) => ({ task_id: taskId, epoch: f.epoch, refused: f.refused }));
    await this.knex('job_fences')
      .insert(rows)
      .onConflict('task_id')
      .merge({
        epoch: this.knex.raw('greatest(job_fences.epoch, excluded.epoch)'),
        refused: this.knex.raw('job_fences.refused + excluded.refused'),
      });
  }
}
