import { runSpec } from '../../src/jobs/job-admission';
import { JobProgress } from '../../src/jobs/job-progress';
import { MAX_FIRST_SEQ } from '../../src/jobs/job-request';
import type { JobSpec } from '../../src/jobs/job-types';
import type { JobCheckpoint, JobRecord } from '../../src/ownership/port';

const FPS = 5;
const T0 = Date.UTC(2026, 11, 1, 8, 0, 0);
const request = {
  job_id: 'job-1',
  scene_code: 'person_vehicle',
  source: { type: 'stream' as const, url: 'rtsp://cam/1' },
};
const spec: JobSpec = {
  jobId: 'job-1',
  sceneCode: 'person_vehicle',
  source: request.source,
  sampleFps: FPS,
  firstSeq: 0,
  epoch: 1,
};

function recordWith(
  checkpoint: JobCheckpoint,
  source: JobRecord['request']['source'] = request.source,
): JobRecord {
  return {
    jobId: 'job-1',
    request: { ...request, source, sample_fps: FPS },
    status: 'running',
    owner: null,
    epoch: 2,
    taken: false,
    stopRequested: false,
    successor: null,
    successorReady: false,
    checkpoint,
    startedAt: new Date(T0).toISOString(),
  };
}

/** A live job's checkpoint as its owner writes it with each beat, taken at `at`. */
function checkpointAt(at: number, progress: (p: JobProgress) => void = () => undefined): JobCheckpoint {
  const now = jest.spyOn(Date, 'now').mockReturnValue(at);
  try {
    const p = new JobProgress(spec, true);
    progress(p);
    return p.checkpoint(false, () => undefined);
  } finally {
    now.mockRestore();
  }
}

describe('where a live job taken over from an owner that died goes on', () => {
  it('past every seq its owner may have published since a checkpoint taken before its first frame', () => {
    // The owner started at T0 and wrote its checkpoint before any frame; it died, and the job is taken 3 s later.
    const cp = checkpointAt(T0);
    expect(cp).toMatchObject({ nextSeq: 0, published: 0, lastTimeMs: T0 });
    const next = runSpec(recordWith(cp), FPS, T0 + 3000);
    // 3 s at 5 fps, and one more: the owner published at most seqs 0-15 after it.
    expect(next.firstSeq).toBe(16);
  });

  it('past the seqs since the time of the last frame of the checkpoint', () => {
    const cp = checkpointAt(T0, (p) => {
      for (let i = 0; i < 10; i++) {
        p.lastLiveTimeMs = T0 + 200 * i;
        p.published(p.lastLiveTimeMs, { tracks: [] });
      }
    });
    expect(cp).toMatchObject({ nextSeq: 10, lastTimeMs: T0 + 1800 });
    expect(runSpec(recordWith(cp), FPS, T0 + 1800 + 2000).firstSeq).toBe(10 + 10 + 1);
  });

  it('exactly where a handover, or a checkpoint with no time, left it; never past the last first seq', () => {
    expect(runSpec(recordWith({ ...checkpointAt(T0), final: true }), FPS, T0 + 60_000).firstSeq).toBe(0);
    const untimed: JobCheckpoint = { nextSeq: 40, published: 40, dropped: 0, reconnects: 0, lastTimeMs: 0 };
    expect(runSpec(recordWith(untimed), FPS, T0).firstSeq).toBe(40);
    // A week without an owner stays within the seq column.
    const old: JobCheckpoint = { ...untimed, nextSeq: MAX_FIRST_SEQ - 5, lastTimeMs: T0 };
    const later = runSpec(recordWith(old), FPS, T0 + 7 * 86_400_000);
    expect(later.firstSeq).toBe(MAX_FIRST_SEQ);
  });

  it('a file job goes on at its checkpoint: its frames after it are decoded again with the same seqs', () => {
    const cp: JobCheckpoint = { nextSeq: 25, published: 25, dropped: 0, reconnects: 0 };
    expect(runSpec(recordWith(cp, { type: 'object', key: 'uploads/a.mp4' }), FPS, T0 + 60_000).firstSeq).toBe(
      25,
    );
  });
});
