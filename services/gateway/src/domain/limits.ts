import { z } from 'zod';

/** Per-subject request limits: sustained QPS with a burst, and concurrent in-flight requests. */
export interface SubjectLimits {
  qps: number;
  burst: number;
  concurrency: number;
}

export const limitOverridesSchema = z.record(
  z.string(),
  z
    .object({
      qps: z.number().positive().optional(),
      burst: z.number().int().min(0).optional(),
      concurrency: z.number().int().positive().optional(),
    })
    .strict(),
);

export type LimitOverrides = z.infer<typeof limitOverridesSchema>;

export function limitsFor(
  subject: string,
  defaults: SubjectLimits,
  overrides: LimitOverrides,
): SubjectLimits {
  return { ...defaults, ...overrides[subject] };
}

/** Retry-After header value (whole seconds, at least 1). */
export function retryAfterSeconds(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)));
}
