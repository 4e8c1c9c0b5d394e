import { z } from 'zod';
import { commonShape, env, loadConfig } from '@vision/shared';
import { type Overrides, overridesSchema } from './domain/limits';

const overridesVar = z
  .string()
  .transform((raw, ctx): Overrides => {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: 'expected a JSON object like {"acme":{"video":10}}',
      });
      return z.NEVER;
    }
    const r = overridesSchema.safeParse(json);
    if (!r.success) {
      const first = r.error.issues[0];
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `expected {"<subject>":{"video"?:int>=0,"image"?:int>=0}}: ${first.path.join('.') || '(root)'}: ${first.message}`,
      });
      return z.NEVER;
    }
    return r.data;
  })
  .default('{}');

/** Variables of the quota service (on top of the common ones). */
export const quotaShape = {
  ...commonShape,
  QUOTA_PORT: env.port(8102),
  QUOTA_VIDEO_DAILY: env.int(5, 0, 1_000_000),
  QUOTA_IMAGE_DAILY: env.int(100, 0, 1_000_000),
  QUOTA_OVERRIDES: overridesVar,
  QUOTA_HOLD_TTL_MS: env.int(600_000, 1000, 24 * 60 * 60 * 1000),
  QUOTA_SWEEP_INTERVAL_MS: env.int(30_000, 100, 24 * 60 * 60 * 1000),
  QUOTA_OUTBOX_INTERVAL_MS: env.int(1000, 10, 60_000),
  /** How long the event relay waits after a commit, so that the events of that time go out together. */
  QUOTA_OUTBOX_LINGER_MS: env.int(50, 0, 5_000),
};

export type QuotaConfig = z.infer<z.ZodObject<typeof quotaShape>>;

export function loadQuotaConfig(source: Record<string, string | undefined>): QuotaConfig {
  return loadConfig(quotaShape, source);
}
