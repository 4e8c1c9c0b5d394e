import { z } from 'zod';
import { invalidRequest } from '@vision/shared';

/** Ids chosen by callers (task ids, request ids): printable, bounded, safe in paths and logs. */
export const idSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9._:-]+$/, 'expected 1-128 characters of letters, digits, . _ : -');

const kind = z.enum(['video', 'image']);
const units = z.number().int().min(1).max(1_000_000);

export const chargeBody = z.object({ charge_id: idSchema, kind, units }).strict();
export const holdBody = z
  .object({
    hold_id: idSchema,
    kind,
    units,
    ttl_ms: z
      .number()
      .int()
      .min(1000)
      .max(24 * 60 * 60 * 1000)
      .optional(),
  })
  .strict();
export const settleBody = z.object({ units: z.number().int().min(0).max(1_000_000) }).strict();

/** Parses with a zod schema; any failure is a 400 OP-TASK-REQUEST-INVALID, unknown fields with reason `unknown_field`. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, what = 'body'): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const unknown = r.error.issues.find((i) => i.code === 'unrecognized_keys');
  if (unknown && unknown.code === 'unrecognized_keys')
    throw invalidRequest(`Unknown field(s) in ${what}: ${unknown.keys.join(', ')}`, 'unknown_field', {
      fields: unknown.keys,
    });
  const issues = r.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  throw invalidRequest(`Invalid ${what}`, 'invalid_field', { issues });
}
