/**
 * docs/API.md names every reason code the code gives callers, and no other: the `details.reason` vocabulary of error
 * answers (REASONS, packages/shared/src/contract/reasons.ts) in "Error reasons", and the codes of a failed or refunded task's
 * `reason` (TASK_REASONS, packages/shared/src/contract/task-reasons.ts) in "Failure reasons". A scan of the source finds every
 * `reason: '<code>'` the code writes outside a metric label, so that a code given outside the two lists is caught too.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REASONS, TASK_REASON_CODES } from '@vision/shared';
import { repoRoot } from '../deploy/deploy-support';
import { serviceSources } from './source-env';

const doc = readFileSync(path.join(repoRoot, 'docs/API.md'), 'utf8');

/** Codes written as `reason: '<code>'` that never reach a caller, and why. */
const NEVER_ANSWERED: Record<string, string> = {
  not_allowed: "the state machine's refusal of a move (services/tasks/src/domain/state-machine.ts)",
};

/** The codes in the first column of the tables of one `### ` section (by its heading). */
function tableCodes(heading: string): string[] {
  const start = doc.indexOf(`\n### ${heading}\n`);
  if (start < 0) throw new Error(`docs/API.md has no "### ${heading}" section`);
  const end = doc.indexOf('\n#', start + 1);
  return doc
    .slice(start, end < 0 ? undefined : end)
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((l) => [...l.split(' | ')[0].matchAll(/`([a-z_]+)`/g)].map((m) => m[1]));
}

/** Each `reason: '<code>'` of the source that is not a metric's label, with the file that writes it. */
function writtenReasons(): Map<string, string> {
  const found = new Map<string, string>();
  for (const { file, text } of serviceSources())
    for (const m of text.matchAll(/(?<![\w])reason: '([a-z_]+)'/g)) {
      const before = text.slice(Math.max(0, (m.index ?? 0) - 120), m.index);
      const inMetricLabel = /\.(?:inc|set|observe|labels)\(\{[^}]*$/.test(before);
      if (!inMetricLabel && !found.has(m[1])) found.set(m[1], file);
    }
  return found;
}

const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();

describe('docs/API.md reason codes', () => {
  it('"Error reasons" names exactly the details.reason vocabulary', () => {
    expect(sorted(tableCodes('Error reasons'))).toEqual(sorted(REASONS));
  });

  it('"Failure reasons" names exactly the codes of a task\'s reason', () => {
    expect(sorted(tableCodes('Failure reasons'))).toEqual(sorted(TASK_REASON_CODES));
  });

  it('every reason code the source writes is in one of the two lists', () => {
    const known = new Set<string>([...REASONS, ...TASK_REASON_CODES]);
    const written = writtenReasons();
    expect(written.size).toBeGreaterThan(5);
    const outside = [...written].filter(([code]) => !known.has(code) && !(code in NEVER_ANSWERED));
    expect(outside.map(([code, file]) => `${code} (${file})`)).toEqual([]);
    for (const code of Object.keys(NEVER_ANSWERED)) expect([code, written.has(code)]).toEqual([code, true]);
  });
});
