import { z } from 'zod';
import type { Kind } from './ledger';

/** Per-subject daily limits replacing the defaults, e.g. `{"acme":{"video":10,"image":500}}`. */
export const overridesSchema = z.record(
  z.string().min(1, 'subject must not be empty'),
  z
    .object({
      video: z.number().int().min(0).max(1_000_000).optional(),
      image: z.number().int().min(0).max(1_000_000).optional(),
    })
    .strict(),
);

export type Overrides = z.infer<typeof overridesSchema>;

export interface Limits {
  video: number;
  image: number;
  overrides: Overrides;
}

export function limitFor(limits: Limits, subject: string, kind: Kind): number {
  const o = Object.prototype.hasOwnProperty.call(limits.overrides, subject)
    ? limits.overrides[subject]
    : undefined;
  return o?.[kind] ?? limits[kind];
}
