import type { SceneCode } from '@vision/shared';

export type JobSource = { type: 'stream'; url: string } | { type: 'object'; key: string };

export interface JobSpec {
  jobId: string;
  sceneCode: SceneCode;
  source: JobSource;
  sampleFps: number;
}

export type JobStatus = 'running' | 'succeeded' | 'failed' | 'stopped';

/** The `job` of docs/INTERNAL.md (inference). */
export interface JobView {
  job_id: string;
  scene_code: SceneCode;
  status: JobStatus;
  reason?: string;
  frames_published: number;
  /** Sampled frames a live job skipped because detection fell behind. */
  frames_dropped: number;
  /** Reconnections of a live stream. */
  reconnects: number;
  started_at: string;
  ended_at?: string;
}
