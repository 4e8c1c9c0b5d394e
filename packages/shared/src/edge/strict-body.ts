import { z } from 'zod';
import { invalidRequest } from '../contract/errors';
import { REASON } from '../contract/reasons';

/**
 * Parses a JSON body against a strict zod object: not an object → `malformed_body`; an unknown field →
 * `unknown_field` (with `details.fields`); any other bad value → `invalid_field` (with `details.field`).
 * Every answer is 400 OP-TASK-REQUEST-INVALID.
 */
export function strictBody<S extends z.ZodRawShape>(shape: S, body: unknown): z.infer<z.ZodObject<S>> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalidRequest('Request body must be a JSON object', REASON.malformed_body);
  const parsed = z.object(shape).strict().safeParse(body);
  if (!parsed.success) {
    const unknown = parsed.error.issues.find((i) => i.code === 'unrecognized_keys');
    if (unknown && unknown.code === 'unrecognized_keys')
      throw invalidRequest(
        `Unknown field(s): ${unknown.keys.map((k) => k.slice(0, 64)).join(', ')}`,
        REASON.unknown_field,
        { fields: unknown.keys.map((k) => k.slice(0, 64)) },
      );
    const first = parsed.error.issues[0];
    throw invalidRequest(`Invalid field ${first.path.join('.')}: ${first.message}`, REASON.invalid_field, {
      field: first.path.join('.'),
    });
  }
  return parsed.data;
}

/**
 * The one answer to a query parameter a route does not take: 400 OP-TASK-REQUEST-INVALID, reason
 * `unknown_field`, `details.field` its name (the first one, in the order given). Every route of the API
 * refuses unknown parameters alike, those that take none included.
 */
export function refuseUnknownQuery(query: Record<string, unknown>, known: readonly string[] = []): void {
  for (const name of Object.keys(query))
    if (!known.includes(name))
      throw invalidRequest(`Unknown query parameter: ${name.slice(0, 64)}`, REASON.unknown_field, {
        field: name.slice(0, 64),
      });
}
