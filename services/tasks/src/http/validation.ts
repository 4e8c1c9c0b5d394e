/** Request checks shared by the create endpoints. */
import type { Request } from 'express';
import { parseIdempotencyKey } from '@vision/shared';

export { strictBody } from '@vision/shared';

export function idempotencyKeyOf(req: Request): string {
  return parseIdempotencyKey(req.headers['idempotency-key']);
}
