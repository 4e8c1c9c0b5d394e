/**
 * Pointers into the docs stay true when a document is split or a section renamed: every `docs/<NAME>.md` (or
 * measurement record, `bench/results/<NAME>.md`) that a doc, record, comment or string names exists, and a section
 * it quotes (`docs/API.md, "Error reasons"`, `docs/PERFORMANCE.md ("Session settings")`) begins a heading or a bold
 * lead-in of that document. Sections are named, never numbered ("section 8" goes stale with the next reordering).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot, repoTextFiles } from '../helpers/repo-files';

const POINTER = /\b(docs|bench\/results)\/([A-Za-z0-9_-]+\.(?:md|yaml))`?(?:(?:,\s*|\s+\(|\s+)"([^"\n]+)")?/g;
const NUMBERED = /\bdocs\/[A-Za-z0-9_-]+\.md,?\s+\(?(?:section|§)\s*\d/i;

const plain = (s: string): string => s.replace(/[`*]/g, '').trim().toLowerCase();

/** The headings and bold lead-ins of a document, without their markup. */
function sectionsOf(doc: string): string[] {
  const headings = [...doc.matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]);
  const bold = [...doc.matchAll(/\*\*([^*\n]+)\*\*/g)].map((m) => m[1]);
  return [...headings, ...bold].map(plain);
}

/** `file:line: problem` for every pointer of one text that does not hold. */
function brokenPointers(file: string, text: string): string[] {
  const out: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (NUMBERED.test(line)) out.push(`${file}:${i + 1}: a numbered section`);
    for (const m of line.matchAll(POINTER)) {
      const name = `${m[1]}/${m[2]}`;
      const target = path.join(repoRoot, name);
      if (!existsSync(target)) {
        out.push(`${file}:${i + 1}: ${name} does not exist`);
        continue;
      }
      const quoted = m[3];
      if (quoted === undefined || !m[2].endsWith('.md')) continue;
      const sections = sectionsOf(readFileSync(target, 'utf8'));
      if (!sections.some((s) => s.startsWith(plain(quoted))))
        out.push(`${file}:${i + 1}: ${name} has no section "${quoted}"`);
    }
  });
  return out;
}

describe('pointers into docs/', () => {
  // The measurement records are read too: recorded bench output is left out of the repository's text files.
  const records = readdirSync(path.join(repoRoot, 'bench/results'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `bench/results/${f}`);
  const files = [...repoTextFiles(), ...records].filter((f) => f !== path.relative(repoRoot, __filename));

  it('are found in docs, comments and strings', () => {
    const pointers = files.flatMap((f) => [
      ...readFileSync(path.join(repoRoot, f), 'utf8').matchAll(POINTER),
    ]);
    expect(pointers.length).toBeGreaterThan(100);
    expect(pointers.filter((m) => m[3] !== undefined).length).toBeGreaterThan(20);
  });

  it('reads a quoted section, and tells a missing document, a missing section and a number', () => {
    expect(brokenPointers('x.ts', 'see docs/API.md, "Error reasons" and docs/openapi.yaml')).toEqual([]);
    expect(brokenPointers('x.ts', 'docs/PERFORMANCE.md ("Session settings")')).toEqual([]);
    expect(brokenPointers('x.md', '`bench/results/overload.md`, "Replays"')).toEqual([]);
    expect(brokenPointers('x.md', '`bench/results/overload.md`, "Nothing"')).toEqual([
      'x.md:1: bench/results/overload.md has no section "Nothing"',
    ]);
    expect(brokenPointers('x.ts', 'docs/NOPE.md')).toEqual(['x.ts:1: docs/NOPE.md does not exist']);
    expect(brokenPointers('x.ts', 'docs/API.md, "No such section"')).toEqual([
      'x.ts:1: docs/API.md has no section "No such section"',
    ]);
    expect(brokenPointers('x.ts', 'docs/OPERATIONS.md section 8')).toEqual(['x.ts:1: a numbered section']);
  });

  it('hold everywhere', () => {
    const broken = files.flatMap((f) => brokenPointers(f, readFileSync(path.join(repoRoot, f), 'utf8')));
    expect(broken).toEqual([]);
  });
});
