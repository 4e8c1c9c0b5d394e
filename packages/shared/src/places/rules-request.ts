import { createHash } from 'node:crypto';
import { invalidRequest } from '../contract/errors';
import { REASON } from '../contract/reasons';
import { parseRules, type RuleSet } from './rules';

/**
 * A request's rule set, or the 400 OP-TASK-REQUEST-INVALID that refuses it: `unknown_field` with
 * `details.fields`, `invalid_field` with `details.field` (the shape strictBody gives any other body).
 */
export function requireRules(input: unknown): RuleSet {
  const parsed = parseRules(input);
  if (parsed.ok) return parsed.rules;
  const { reason, message, details } = parsed.error;
  throw invalidRequest(
    message,
    reason === 'unknown_field' ? REASON.unknown_field : REASON.invalid_field,
    details,
  );
}

/** True when the set has no zone and no line. */
export function isEmptyRuleSet(rules: RuleSet): boolean {
  return rules.zones.length === 0 && rules.lines.length === 0;
}

/** JSON with object keys sorted: two rule sets are the same rules exactly when these strings are equal. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

/**
 * The address of a rule set's content: the SHA-256 (hex) of its canonical JSON. Tasks stores each set once per
 * task under it and its versions and events refer to it; results keeps the sets it was sent under it; a replay
 * cursor names its rules by it.
 */
export function rulesDigest(rules: RuleSet): string {
  return createHash('sha256').update(canonicalJson(rules)).digest('hex');
}
