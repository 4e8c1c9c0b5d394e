import type { Bus, Logger, SceneCode } from '@vision/shared';
import type { Resolver } from '../net/stream-url';
import type { SceneEngine } from '../scenes/engines';
import type { JobCheckpoint } from '../ownership/port';

export type JobSource = { type: 'stream'; url: string } | { type: 'object'; key: string };

export interface JobSpec {
  jobId: string;
  sceneCode: SceneCode;
  source: JobSource;
  sampleFps: number;
  /** Seq of the first frame (0, or past every frame of a lost earlier run of the same task). */
  firstSeq: number;
  /** Tasks' grant for this job, carried on each message it publishes (results refuses messages without it). */
  grant?: string;
  /** The epoch this replica took the job at, on each message it publishes (results refuses a stale owner's). */
  epoch: number;
  /** Where an earlier owner's run stopped: this run goes on from there (first seq, counts, tracks, file position). */
  resume?: JobCheckpoint;
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

/** A job's view as it starts (on this replica: the counts of earlier owners' runs go on). */
export function runningView(spec: JobSpec, startedAt = new Date().toISOString()): JobView {
  return {
    job_id: spec.jobId,
    scene_code: spec.sceneCode,
    status: 'running',
    frames_published: spec.resume?.published ?? 0,
    frames_dropped: spec.resume?.dropped ?? 0,
    reconnects: spec.resume?.reconnects ?? 0,
    started_at: startedAt,
  };
}

/** What ffmpeg reads: a local file, a presigned object URL, or a stream URL of one scheme. */
export type InputKind = 'file' | 'http' | 'https' | 'rtsp' | 'rtmp';

/** Where ffmpeg reads from, after resolving an object key or checking a stream URL. */
export interface ResolvedInput {
  kind: InputKind;
  input: string;
  /** Live stream: frame times are capture times, reconnects with backoff, frames dropped when behind. */
  live: boolean;
  /** Host to check again before each (re)connection. */
  host?: string;
}

export interface JobRuntimeOptions {
  bus: Bus;
  engine: SceneEngine;
  logger: Logger;
  ffmpegPath: string;
  giveupMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  liveQueue: number;
  allowPrivate: boolean;
  resolve?: Resolver;
  ioTimeoutMs?: number;
  /** Egress proxy for the HTTP(S) connections of caller-given streams (not for stored objects). */
  httpProxy?: string;
  /** Frames of the ring of recent frames, once armed (frame-ring.ts); 0: none. */
  ringFrames?: number;
  /** How long an ended job keeps its ring for the pictures asked after its last frames. */
  ringLingerMs?: number;
}
