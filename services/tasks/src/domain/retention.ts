/** Result retention (SPEC.md 8: 90 days). Pure. */
export const RETENTION_DAYS = 90;
const DAY_MS = 24 * 60 * 60 * 1000;

export function resultExpiresAt(createdAt: Date, days = RETENTION_DAYS): Date {
  return new Date(createdAt.getTime() + days * DAY_MS);
}
