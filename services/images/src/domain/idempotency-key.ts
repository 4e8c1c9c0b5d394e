/** Standard UUID form (8-4-4-4-12 hex digits), any version, as SPEC.md 4.6 asks for Idempotency-Key. */
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string | undefined): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}

/** Keys are compared case-insensitively: the stored form is lower case. */
export function normaliseKey(value: string): string {
  return value.toLowerCase();
}
