import type { JobView } from '@vision/shared';
import { abortedByShutdown, LIVE_SEQ_STRIDE, MAX_JOB_RESTARTS, planLostJob } from '../../src/domain/lost-job';

const job = (over: Partial<JobView>): JobView => ({
  job_id: 'j',
  scene_code: 'ship',
  status: 'running',
  ...over,
});

describe('a lost job', () => {
  test('a file starts again from seq 0; a stream at the next run of LIVE_SEQ_STRIDE seqs', () => {
    expect(planLostJob({ source_type: 'file', job_restarts: 0 }, 3)).toEqual({
      kind: 'restart',
      firstSeq: 0,
    });
    expect(planLostJob({ source_type: 'file', job_restarts: 2 }, 3)).toEqual({
      kind: 'restart',
      firstSeq: 0,
    });
    expect(planLostJob({ source_type: 'stream', job_restarts: 0 }, 3)).toEqual({
      kind: 'restart',
      firstSeq: LIVE_SEQ_STRIDE,
    });
    expect(planLostJob({ source_type: 'stream', job_restarts: 2 }, 3)).toEqual({
      kind: 'restart',
      firstSeq: 3 * LIVE_SEQ_STRIDE,
    });
  });

  test('gives up once the restarts are spent, and never past the runs that fit below 2^31', () => {
    expect(planLostJob({ source_type: 'stream', job_restarts: 3 }, 3)).toEqual({ kind: 'give_up' });
    expect(planLostJob({ source_type: 'file', job_restarts: 0 }, 0)).toEqual({ kind: 'give_up' });
    const last = planLostJob({ source_type: 'stream', job_restarts: MAX_JOB_RESTARTS - 1 }, 100);
    expect(last).toEqual({ kind: 'restart', firstSeq: MAX_JOB_RESTARTS * LIVE_SEQ_STRIDE });
    // Its frames (up to LIVE_SEQ_STRIDE of them) still fit a Postgres integer.
    expect(MAX_JOB_RESTARTS * LIVE_SEQ_STRIDE + LIVE_SEQ_STRIDE - 1).toBeLessThanOrEqual(2 ** 31 - 1);
    expect(planLostJob({ source_type: 'stream', job_restarts: MAX_JOB_RESTARTS }, 100)).toEqual({
      kind: 'give_up',
    });
  });

  test('only a failure for the backend shutting down waits for the next backend', () => {
    expect(
      abortedByShutdown(
        job({ status: 'failed', reason: 'backend_shutdown: the inference backend shut down' }),
      ),
    ).toBe(true);
    expect(abortedByShutdown(job({ status: 'failed', reason: 'stream_lost: the stream was lost' }))).toBe(
      false,
    );
    expect(abortedByShutdown(job({ status: 'failed' }))).toBe(false);
    expect(abortedByShutdown(job({ status: 'running' }))).toBe(false);
    expect(abortedByShutdown(job({ status: 'stopped', reason: 'backend_shutdown: x' }))).toBe(false);
  });
});
