/** The zones and lines of a create request (docs/ANALYTICS.md). Pure: refusals are the API's 400 errors. */
import {
  REASON,
  type RuleSet,
  canonicalJson,
  invalidRequest,
  isEmptyRuleSet,
  requireRules,
} from '@vision/shared';

export interface RequestRules {
  set: RuleSet;
  /** Its canonical JSON: part of the create's idempotency meaning. */
  canonical: string;
}

/** The rules of a JSON create body; undefined when it gives none (both absent, or both empty). */
export function rulesOfRequest(zones: unknown, lines: unknown): RequestRules | undefined {
  if (zones === undefined && lines === undefined) return undefined;
  const set = requireRules({
    ...(zones !== undefined ? { zones } : {}),
    ...(lines !== undefined ? { lines } : {}),
  });
  return isEmptyRuleSet(set) ? undefined : { set, canonical: canonicalJson(set) };
}

function jsonField(name: string, text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalidRequest(`Invalid field ${name}: must be a JSON array`, REASON.invalid_field, {
      field: name,
    });
  }
}

/** The rules of a multipart create: the `zones` and `lines` text fields, each a JSON array. */
export function rulesOfUpload(
  zones: string | undefined,
  lines: string | undefined,
): RequestRules | undefined {
  return rulesOfRequest(jsonField('zones', zones), jsonField('lines', lines));
}
