/** The body of `POST /internal/v1/jobs` (docs/INTERNAL.md): a job as tasks submits it. */
import { z } from 'zod';
import { MAX_JOB_GRANT_LENGTH } from '@vision/shared';

/** Frame seqs are Postgres `integer`s in results: a first seq leaves room for 2^28 frames below 2^31. */
export const MAX_FIRST_SEQ = 2 ** 31 - 2 ** 28;

export const jobRequestSchema = z
  .object({
    job_id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'expected 1-128 characters of [A-Za-z0-9._:-]'),
    scene_code: z.string().min(1).max(64),
    source: z.union([
      z.object({ type: z.literal('stream'), url: z.string().min(1).max(2048) }).strict(),
      z.object({ type: z.literal('object'), key: z.string().min(1).max(1024) }).strict(),
    ]),
    sample_fps: z.number().positive().max(30).optional(),
    /** The seq of the job's first frame: a job started again after its backend lost it (docs/INTERNAL.md). */
    first_seq: z.number().int().min(0).max(MAX_FIRST_SEQ).optional(),
    /** Tasks' signed grant for this job (job-grant.ts), copied onto every message the job publishes. */
    grant: z.string().min(1).max(MAX_JOB_GRANT_LENGTH).optional(),
    /** Keep the job's recent frames from its first on (a task with zones or lines: the pictures of events). */
    keep_frames: z.boolean().optional(),
  })
  .strict();
export type JobRequest = z.infer<typeof jobRequestSchema>;
