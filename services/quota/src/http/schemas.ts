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

/** A lifetime or window in milliseconds: 1 s to 24 h. */
const ttl = z
  .number()
  .int()
  .min(1000)
  .max(24 * 60 * 60 * 1000);

export const chargeBody = z.object({ charge_id: idSchema, kind, units }).strict();
export const holdBody = z
  .object({
    hold_id: idSchema,
    kind,
    units,
    ttl_ms: ttl.optional(),
  })
  .strict();
export const leaseBody = z
  .object({
    kind,
    min_units: units,
    max_units: units,
    window_ms: ttl,
    ttl_ms: ttl,
  })
  .strict()
  .refine((b) => b.max_units >= b.min_units, 'max_units must be at least min_units')
  .refine((b) => b.ttl_ms >= b.window_ms, 'ttl_ms must be at least window_ms');
export const spendBody = z
  .object({
    spends: z
      .array(z.object({ charge_id: idSchema, units }).strict())
      .min(1)
      .max(500),
  })
  .strict()
  .refine(
    (b) => new Set(b.spends.map((s) => s.charge_id)).size === b.spends.length,
    'charge ids must be distinct',
  );
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
