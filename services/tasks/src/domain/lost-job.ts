/**
 * A running task whose job the inference backend lost: the backend restarted without it (jobs live in its
 * memory). Pure: no I/O.
 *
 * The task is not at fault, so its job is started again, up to TASKS_JOB_RESTARTS times, and the task stays
 * `running`. After that it is refunded (`backend_lost_job`): a job that keeps taking its backend down must not
 * take it down for ever.
 * - An uploaded file starts again from its first frame: the frames are the same, with the same seqs, and results
 *   keeps each `(task_id, seq)` once, so the caller sees every frame once.
 * - A live stream starts again from now, at a first seq past every frame an earlier run can have published:
 *   run `n` (counted from 0) starts at `n × LIVE_SEQ_STRIDE`. What the stream showed while no job ran is not seen.
 *
 * A backend that shuts down aborts its jobs (`failed`, `backend_shutdown`) and publishes no end for them: the
 * task waits for the backend that replaces it, which does not know the job, and the job is started there.
 */
import { taskReasonCode, type JobView } from '@vision/shared';

/** Seqs of one run of a live job: 2^28 frames, over 300 days at 10 frames a second. */
export const LIVE_SEQ_STRIDE = 2 ** 28;
/** Runs of a live job fit below 2^31 (frame seqs are Postgres `integer`s in results): restarts stay below 7. */
export const MAX_JOB_RESTARTS = 7;

/** A job its backend aborted as it shut down: the task waits for the backend that replaces it. */
export function abortedByShutdown(job: JobView): boolean {
  return job.status === 'failed' && taskReasonCode(job.reason) === 'backend_shutdown';
}

export type LostJobPlan = { kind: 'restart'; firstSeq: number } | { kind: 'give_up' };

/**
 * What to do with a task whose job is lost, `restarts` being the times its job was started again before.
 * `firstSeq` is the seq of the new run's first frame.
 */
export function planLostJob(
  task: { source_type: string | null; job_restarts: number },
  maxRestarts: number,
): LostJobPlan {
  const limit = Math.min(maxRestarts, MAX_JOB_RESTARTS);
  if (task.job_restarts >= limit) return { kind: 'give_up' };
  const run = task.job_restarts + 1;
  return { kind: 'restart', firstSeq: task.source_type === 'stream' ? run * LIVE_SEQ_STRIDE : 0 };
}
