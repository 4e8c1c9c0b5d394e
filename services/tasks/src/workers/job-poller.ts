/** Moves running/stopping tasks after the jobs the backend reports (SPEC.md 3: "the service's own query"). */
import { type TaskContext, workerIdentity } from '../ports';
import { abortedByShutdown } from '../domain/lost-job';
import { restartLostJob } from '../use-cases/restart-lost-job';
import { followJob } from '../use-cases/submission';
import { isolatedMove, writeFailed } from './isolated';

export async function pollJobs(ctx: TaskContext): Promise<void> {
  const tasks = await ctx.store.inStatus(['running', 'stopping'], 200);
  for (let i = 0; i < tasks.length; i += 100) {
    const batch = tasks.slice(i, i + 100);
    const jobs = await ctx.inference.getJobs(
      workerIdentity('tasks-service'),
      batch.map((t) => t.task_id),
    );
    for (const task of batch) {
      const job = jobs.get(task.task_id);
      if (!job) {
        // The backend restarted without the job: a running task's job starts again (domain/lost-job.ts).
        if (task.status === 'running')
          await restartLostJob(ctx, task).catch((err: unknown) => writeFailed(ctx, task.task_id, err));
        else await isolatedMove(ctx, task.task_id, 'stop_confirmed');
        continue;
      }
      if (abortedByShutdown(job)) continue; // started again on the backend that replaces this one
      await followJob(ctx, task, job).catch((err: unknown) => writeFailed(ctx, task.task_id, err));
    }
  }
  ctx.signals.eventsWritten();
}
