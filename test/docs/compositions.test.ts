/**
 * docs/TESTING.md "Which composition proves what" lists every file of test/e2e and test/transport, and its rows
 * marked "standalone" are exactly the reasons those files give `standaloneOnly` (test/helpers/composition.ts), the
 * one way a case of theirs skips the distributed suite.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../helpers/repo-files';

const FOLDERS = ['test/e2e', 'test/transport'];
const SECTION = '## Which composition proves what';

interface TestFile {
  /** Relative to the repository root. */
  file: string;
  text: string;
}

interface Row {
  file: string;
  proven: string;
  why: string;
}

/** The rows of the section's table. */
function tableRows(doc: string): Row[] {
  const start = doc.indexOf(`\n${SECTION}\n`);
  if (start < 0) throw new Error(`docs/TESTING.md has no "${SECTION}" section`);
  const end = doc.indexOf('\n## ', start + 1);
  return doc
    .slice(start, end < 0 ? undefined : end)
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) => {
      const cells = l.split(' | ').map((c) => c.replace(/^\| |\s*\|$/g, '').trim());
      return { file: cells[0].replace(/`/g, ''), proven: cells[2], why: cells[3] };
    });
}

/** The reasons a file gives standaloneOnly, in order; throws on a call whose reason is not one literal. */
function reasonsOf(t: TestFile): string[] {
  const calls = t.text.match(/\bstandaloneOnly\(/g)?.length ?? 0;
  const reasons = [...t.text.matchAll(/\bstandaloneOnly\(\s*'([^']+)'\s*,?\s*\)/g)].map((m) => m[1]);
  if (reasons.length !== calls)
    throw new Error(`${t.file}: a standaloneOnly call whose reason is not one string literal`);
  return reasons;
}

/** Every way the table and the files disagree, one line each ([] when they agree). */
function compositionMismatches(doc: string, files: TestFile[]): string[] {
  const rows = tableRows(doc);
  const out: string[] = [];
  for (const r of rows) {
    if (!['both', 'standalone'].includes(r.proven))
      out.push(`${r.file}: "${r.proven}" is neither "both" nor "standalone"`);
    if (!files.some((f) => f.file === r.file)) out.push(`${r.file}: in the table, but no such test file`);
  }
  for (const f of files) {
    const mine = rows.filter((r) => r.file === f.file);
    if (!mine.length) out.push(`${f.file}: not in the table`);
    // Another way to skip the distributed suite would leave the table behind.
    if (/\b(?:describe|it|test)\.skip\b|E2E_STACK/.test(f.text))
      out.push(`${f.file}: skips a case without standaloneOnly`);
    const given = new Set(reasonsOf(f));
    const listed = new Set(mine.filter((r) => r.proven === 'standalone').map((r) => r.why));
    for (const why of given) if (!listed.has(why)) out.push(`${f.file}: no standalone row says "${why}"`);
    for (const why of listed)
      if (!given.has(why)) out.push(`${f.file}: a standalone row says "${why}", the file does not`);
  }
  return out;
}

const testFiles = (): TestFile[] =>
  FOLDERS.flatMap((dir) =>
    readdirSync(path.join(repoRoot, dir))
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => {
        const file = `${dir}/${f}`;
        return { file, text: readFileSync(path.join(repoRoot, file), 'utf8') };
      }),
  );

describe('docs/TESTING.md: which composition proves what', () => {
  const doc = readFileSync(path.join(repoRoot, 'docs/TESTING.md'), 'utf8');
  const files = testFiles();

  it('lists every end-to-end and transport file, with the reasons their cases give for running once', () => {
    expect(files.length).toBeGreaterThan(20);
    expect(compositionMismatches(doc, files)).toEqual([]);
  });

  // The check reads what it claims to read: each kind of drift is caught.
  it('fails when a file, a reason or a row is missing, or a case skips another way', () => {
    const gateway = files.find((f) => f.file === 'test/e2e/request-shapes.test.ts')!;
    const row = doc
      .split('\n')
      .find((l) => l.startsWith('| `test/e2e/request-shapes.test.ts`') && /standalone/.test(l))!;
    expect(compositionMismatches(doc.replace(row, ''), files)).toEqual([
      'test/e2e/request-shapes.test.ts: no standalone row says "the gateway answers before it forwards anything"',
    ]);
    const moved = {
      ...gateway,
      text: gateway.text.replace(/standaloneOnly\([^)]*\)/, "standaloneOnly('another reason')"),
    };
    expect(compositionMismatches(doc, [...files.filter((f) => f !== gateway), moved])).toEqual([
      'test/e2e/request-shapes.test.ts: no standalone row says "another reason"',
      'test/e2e/request-shapes.test.ts: a standalone row says "the gateway answers before it forwards anything", the file does not',
    ]);
    const added = { file: 'test/e2e/new.test.ts', text: "it.skip('x', () => undefined);" };
    expect(compositionMismatches(doc, [...files, added])).toEqual([
      'test/e2e/new.test.ts: not in the table',
      'test/e2e/new.test.ts: skips a case without standaloneOnly',
    ]);
  });
});
