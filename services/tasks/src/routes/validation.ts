/** Request checks shared by the create endpoints. */
import type { Request } from 'express';
import { z } from 'zod';
import { invalidRequest } from '@vision/shared';
import { isUuid } from '../domain/fingerprint';

export function idempotencyKeyOf(req: Request): string {
  const key = req.header('idempotency-key');
  if (key === undefined || key === '')
    throw invalidRequest('Idempotency-Key header is required', 'idempotency_key', { problem: 'missing' });
  if (!isUuid(key))
    throw invalidRequest('Idempotency-Key must be a UUID (8-4-4-4-12 hex digits)', 'idempotency_key', {
      problem: 'not_uuid',
    });
  return key.toLowerCase();
}

/** Parses a JSON body against a strict zod object; unknown fields give reason `unknown_field`. */
export function strictBody<S extends z.ZodRawShape>(shape: S, body: unknown): z.infer<z.ZodObject<S>> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalidRequest('Request body must be a JSON object', 'malformed_body');
  const parsed = z.object(shape).strict().safeParse(body);
  if (!parsed.success) {
    const unknown = parsed.error.issues.find((i) => i.code === 'unrecognized_keys');
    if (unknown && unknown.code === 'unrecognized_keys')
      throw invalidRequest(
        `Unknown field(s): ${unknown.keys.map((k) => k.slice(0, 64)).join(', ')}`,
        'unknown_field',
        {
          fields: unknown.keys.map((k) => k.slice(0, 64)),
        },
      );
    const first = parsed.error.issues[0];
    throw invalidRequest(`Invalid field ${first.path.join('.')}: ${first.message}`, 'invalid_field', {
      field: first.path.join('.'),
    });
  }
  return parsed.data;
}
