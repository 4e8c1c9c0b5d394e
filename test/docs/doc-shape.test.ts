/**
 * Each document answers one question, and stays short enough to read at a sitting: README's table gives every
 * document under docs/ one row with the question it answers, names no document that is missing, and no document
 * (README.md and the measurement records under bench/results included) passes MAX_LINES lines. A document that
 * grows past the bound is split by question, and the new one gets its row.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../helpers/repo-files';

const MAX_LINES = 420;

const docs = readdirSync(path.join(repoRoot, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`)
  .sort();

const lineCount = (file: string): number =>
  readFileSync(path.join(repoRoot, file), 'utf8').replace(/\n$/, '').split('\n').length;

/** The rows of README's "Documentation" table: the document of the first cell, and the question of the second. */
function readmeRows(): { doc: string; question: string }[] {
  const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Documentation\n');
  if (start < 0) throw new Error('README.md has no "## Documentation" section');
  const end = readme.indexOf('\n## ', start + 1);
  return readme
    .slice(start, end < 0 ? undefined : end)
    .split('\n')
    .filter((l) => l.startsWith('| `docs/'))
    .map((l) => {
      const cells = l.split(' | ');
      return { doc: /`(docs\/[^`]+\.md)`/.exec(cells[0])?.[1] ?? cells[0], question: cells[1] ?? '' };
    });
}

describe('documents', () => {
  it(`pass no ${MAX_LINES} lines, README.md and the measurement records of bench/results included`, () => {
    expect(docs.length).toBeGreaterThan(10);
    const records = readdirSync(path.join(repoRoot, 'bench/results'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `bench/results/${f}`);
    const long = [...docs, 'README.md', ...records]
      .map((f) => ({ file: f, lines: lineCount(f) }))
      .filter((d) => d.lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it("each have one row in README's table, with the question they answer", () => {
    const rows = readmeRows();
    expect(rows.map((r) => r.doc).sort()).toEqual(docs);
    for (const r of rows)
      expect({ doc: r.doc, asks: /\?\s*\|?\s*$/.test(r.question) }).toEqual({ doc: r.doc, asks: true });
  });
});
