/** The costliest rule set the validator accepts (heaviest-rules.js). */
export function heaviestRules(watch?: string[]): { zones: Record<string, unknown>[] };
