/**
 * The messages a job publishes to vision.frames (docs/INTERNAL.md): its frames, then one end message. A job's
 * own count starts at 0; the seqs it publishes start at its first seq.
 */
import { TOPICS, type Bus, type DetectedObject, type Logger } from '@vision/shared';
import type { JobStatus } from './job-types';

export type Ending = { status: Exclude<JobStatus, 'running'>; reason?: string };

export interface FrameBody {
  seq: number;
  frame_time_ms: number;
  image: { width: number; height: number };
  objects: DetectedObject[];
  lower_bound: number;
  captured_at_ms: number;
}

export class FramePublisher {
  private readonly taskId: string;
  private readonly firstSeq: number;
  /** The job's grant from tasks, on every message (results stores none without it). */
  private readonly grant: { grant?: string };
  /** The epoch the job was taken at, on every message: results refuses an owner's below one it has seen. */
  private readonly epoch: number;

  constructor(
    private readonly bus: Bus,
    private readonly logger: Logger,
    job: { jobId: string; firstSeq: number; grant?: string; epoch: number },
    /** A stopped job stops retrying its frames (its end message is still retried). */
    private readonly stopped: () => boolean,
  ) {
    this.taskId = job.jobId;
    this.firstSeq = job.firstSeq;
    this.grant = job.grant ? { grant: job.grant } : {};
    this.epoch = job.epoch;
  }

  /** Says that this replica runs the job from now on, before its first frame: results fences earlier owners. */
  owner(): Promise<void> {
    return this.publish({
      schema: 1,
      type: 'owner',
      event_id: `${this.taskId}:owner:${this.epoch}`,
      task_id: this.taskId,
      epoch: this.epoch,
      ...this.grant,
    });
  }

  /** Publishes frame number `body.seq` of this job. */
  frame(body: FrameBody): Promise<void> {
    const seq = this.firstSeq + body.seq;
    const id = `${this.taskId}:${seq}`;
    return this.publish({
      schema: 1,
      type: 'frame',
      event_id: id,
      task_id: this.taskId,
      frame_id: id,
      ...body,
      seq,
      epoch: this.epoch,
      ...this.grant,
    });
  }

  /** Publishes the end after `frames` frames of this job: `frames` in the message is the seq after the last. */
  end(frames: number, ending: Ending): Promise<void> {
    const next = this.firstSeq + frames;
    return this.publish(
      {
        schema: 1,
        type: 'end',
        event_id: `${this.taskId}:end`,
        task_id: this.taskId,
        seq: next,
        frames: next,
        status: ending.status,
        ...(ending.reason ? { reason: ending.reason } : {}),
        epoch: this.epoch,
        ...this.grant,
      },
      true,
    );
  }

  /** Publishes one message keyed by the task id, retrying with backoff (at least once). */
  private async publish(value: object, isEnd = false): Promise<void> {
    let delay = 200;
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await this.bus.publish(TOPICS.frames, [{ key: this.taskId, value }]);
        return;
      } catch (err) {
        if ((!isEnd && this.stopped()) || Date.now() > deadline) throw err;
        this.logger.warn({ err, job_id: this.taskId }, 'publish failed, retrying');
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 5000);
      }
    }
  }
}
