/**
 * A call only a job's owner can answer (its still, a picture from its ring, arming the ring, a stop), made to
 * another replica: sent on to the owner as it came, with the caller's identity header (it names this route and
 * the inference audience, which every replica accepts), and its answer given back as it is. A call that was
 * forwarded once is never forwarded again.
 */
import type { Request, Response } from 'express';
import { IDENTITY_HEADER, REQUEST_ID_HEADER, traceHeaders } from '@vision/shared';

export const FORWARDED_HEADER = 'x-vision-forwarded';

/** The longest a forwarded call waits for the owner (under the callers' own timeouts). */
const FORWARD_TIMEOUT_MS = 5000;

export function wasForwarded(req: Request): boolean {
  return req.header(FORWARDED_HEADER) !== undefined;
}

/** Sends `req` on to the owner at `base` and answers with its answer; false when the owner could not be reached. */
export async function forwardToOwner(req: Request, res: Response, base: string): Promise<boolean> {
  const headers: Record<string, string> = { ...traceHeaders(), [FORWARDED_HEADER]: '1' };
  for (const h of [IDENTITY_HEADER, REQUEST_ID_HEADER, 'content-type']) {
    const v = req.header(h);
    if (v !== undefined) headers[h] = v;
  }
  let answer: globalThis.Response;
  try {
    answer = await fetch(new URL(req.originalUrl, base), {
      method: req.method,
      headers,
      ...(req.method === 'POST' && { body: JSON.stringify(req.body ?? {}) }),
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
  } catch {
    return false;
  }
  const body = Buffer.from(await answer.arrayBuffer());
  res.status(answer.status);
  const type = answer.headers.get('content-type');
  if (type) res.set('content-type', type);
  res.send(body);
  return true;
}
