import { invalidRequest, refuseUnknownQuery } from '@vision/shared';

/** Page size bounds of SPEC.md 4.4 and the default used when `limit` is omitted (docs/RESULTS.md). */
export const MIN_LIMIT = 1;
export const MAX_LIMIT = 500;
export const DEFAULT_LIMIT = 100;

export interface ReadQuery {
  /** The opaque cursor as given; undefined when absent or empty (start at the first frame). */
  cursor?: string;
  limit: number;
  /** The caller's `min_score`, before clamping; undefined when the caller gave none. */
  minScore?: number;
}

const KNOWN = new Set(['cursor', 'limit', 'min_score']);
const INTEGER = /^[0-9]{1,6}$/;
/**
 * A number as JSON writes one (docs/openapi.yaml declares `min_score` a number, and clients serialise
 * 1e-7 or -0.0 that way): optional minus, decimal digits, optional exponent. No hex, Infinity, NaN,
 * plus sign or whitespace.
 */
const DECIMAL = /^-?(?:[0-9]{1,20}(?:\.[0-9]{0,20})?|\.[0-9]{1,20})(?:[eE][+-]?[0-9]{1,3})?$/;

type RawQuery = Record<string, unknown>;

function single(query: RawQuery, name: string): string | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string')
    throw invalidRequest(
      `Query parameter ${name} must be given once, as a plain value`,
      name === 'limit' ? 'invalid_limit' : name === 'min_score' ? 'invalid_min_score' : 'invalid_cursor',
      { field: name },
    );
  return v;
}

/**
 * Validates the query string of GET /v1/vision/tasks/{id}/results. Unknown parameters are rejected
 * (reason `unknown_field`), like unknown JSON fields elsewhere in the API.
 */
export function parseReadQuery(query: RawQuery, defaultLimit = DEFAULT_LIMIT): ReadQuery {
  refuseUnknownQuery(query, [...KNOWN]);
  const out: ReadQuery = { limit: defaultLimit };

  const cursor = single(query, 'cursor');
  if (cursor !== undefined && cursor !== '') out.cursor = cursor;

  const limit = single(query, 'limit');
  if (limit !== undefined) {
    const n = INTEGER.test(limit) ? Number(limit) : NaN;
    if (!Number.isInteger(n) || n < MIN_LIMIT || n > MAX_LIMIT)
      throw invalidRequest(`limit must be an integer from ${MIN_LIMIT} to ${MAX_LIMIT}`, 'invalid_limit', {
        field: 'limit',
      });
    out.limit = n;
  }

  const minScore = single(query, 'min_score');
  if (minScore !== undefined) {
    const x = DECIMAL.test(minScore) ? Number(minScore) : NaN;
    if (!Number.isFinite(x) || x < 0 || x > 1)
      throw invalidRequest('min_score must be a number from 0 to 1', 'invalid_min_score', {
        field: 'min_score',
      });
    out.minScore = x;
  }
  return out;
}
