import type { RequestHandler } from 'express';
import { invalidRequest } from '../contract/errors';

/** Longest request target (path and query) accepted; Node itself refuses heads over 16 KiB with 431. */
export const MAX_TARGET_LENGTH = 8 * 1024;

/**
 * Control characters (C0, DEL) have no business in a path, a query value or a caller's free text (a
 * description) of this API; NUL in particular is a byte no Postgres text column stores.
 */
// eslint-disable-next-line no-control-regex
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

function decodes(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

/**
 * True for a decoded path that proxies, routers and file systems may read differently: a backslash
 * (some treat it as `/`) or a `.` / `..` segment (some collapse it). Such a path would be routed on one
 * form and forwarded or served on another, so it is refused rather than normalised.
 */
export function ambiguousPath(decodedPath: string): boolean {
  if (decodedPath.includes('\\')) return true;
  return decodedPath.split('/').some((segment) => segment === '.' || segment === '..');
}

/**
 * Refuses request targets no route can serve before any route sees them: too long, malformed
 * percent-encoding (`%ZZ`), control characters such as NUL once decoded, or an ambiguous path (a
 * backslash or dot segment, raw or encoded as `%5C` / `%2E`). Each answers 400
 * OP-TASK-REQUEST-INVALID with `details.reason` `invalid_path` or `invalid_query`, never a 500 from a
 * decoder or a database deeper down. Used by the gateway and by every service's app.
 */
export function requestShapeGuard(): RequestHandler {
  return (req, _res, next) => {
    const target = req.originalUrl ?? req.url;
    if (target.length > MAX_TARGET_LENGTH)
      return next(
        invalidRequest(`The request target exceeds ${MAX_TARGET_LENGTH} characters`, 'invalid_path', {
          limit: MAX_TARGET_LENGTH,
        }),
      );
    const q = target.indexOf('?');
    const path = q < 0 ? target : target.slice(0, q);
    const decodedPath = decodes(path);
    if (decodedPath === undefined || CONTROL_CHARACTER.test(decodedPath))
      return next(
        invalidRequest(
          'The request path is not valid: malformed percent-encoding or a control character',
          'invalid_path',
        ),
      );
    if (ambiguousPath(decodedPath))
      return next(
        invalidRequest(
          'The request path is not valid: a backslash or a "." or ".." segment (after decoding)',
          'invalid_path',
        ),
      );
    if (q >= 0) {
      for (const pair of target.slice(q + 1).split('&')) {
        const decoded = decodes(pair.replace(/\+/g, ' '));
        if (decoded === undefined || CONTROL_CHARACTER.test(decoded))
          return next(
            invalidRequest(
              'The query string is not valid: malformed percent-encoding or a control character',
              'invalid_query',
            ),
          );
      }
    }
    next();
  };
}
