/**
 * The record of an image call, as the images service publishes it on `vision.image-calls` and answers
 * it on GET /internal/v1/calls/{task_id} (docs/INTERNAL.md). Pure.
 */
import { z } from 'zod';
import { isUuid } from '@vision/shared';

const count = z.number().int().min(0);
const instant = z
  .string()
  .max(40)
  .refine((s) => !Number.isNaN(Date.parse(s)), 'expected an ISO 8601 instant');

/** The record's fields (a `vision.image-calls` value also carries schema, event_id and type). */
export const imageCallRecordSchema = z.object({
  task_id: z.string().min(1).max(64),
  subject: z.string().min(1).max(200),
  request_id: z.string().refine(isUuid, 'expected a UUID'),
  scene_code: z.string().min(1).max(64),
  status: z.enum(['succeeded', 'failed']),
  results_summary: z.object({ images: count, succeeded: count, failed: count }),
  created_at: instant,
  updated_at: instant,
});

export type ImageCallRecord = z.infer<typeof imageCallRecordSchema>;
