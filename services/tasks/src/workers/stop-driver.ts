/** Sends stops for every `stopping` task until the backend confirms (survives restarts: the state is in the db). */
import type { JobView } from '@vision/shared';
import { type TaskContext, workerIdentity } from '../ports';
import { followJob } from '../use-cases/submission';
import { isolatedMove, writeFailed } from './isolated';

export async function driveStops(ctx: TaskContext): Promise<void> {
  const tasks = await ctx.store.inStatus(['stopping'], 100);
  for (const task of tasks) {
    let job: JobView | null;
    try {
      job = await ctx.inference.stopJob(workerIdentity(task.subject), task.task_id);
    } catch {
      continue;
    }
    if (!job || job.status === 'stopped') await isolatedMove(ctx, task.task_id, 'stop_confirmed');
    else await followJob(ctx, task, job).catch((err: unknown) => writeFailed(ctx, task.task_id, err));
  }
  ctx.signals.eventsWritten();
}
