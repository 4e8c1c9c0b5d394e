/**
 * The code map of docs/ARCHITECTURE.md (SPEC rule -> file and function -> test) stays true: every file it names
 * exists, every function, class or constant it names is defined in that file, and every test it quotes («...») is
 * in the test file it names.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const doc = readFileSync(path.join(root, 'docs/ARCHITECTURE.md'), 'utf8');
const section = doc.slice(doc.indexOf('## Code map'));
const rows = section
  .slice(0, section.indexOf('\n## ', 5) > 0 ? section.indexOf('\n## ', 5) : undefined)
  .split('\n')
  .filter((l) => l.startsWith('| ') && !l.startsWith('| SPEC'))
  .map((l) => l.split(' | ').map((c) => c.replace(/^\| |\s*\|$/g, '')));

const read = (file: string): string => readFileSync(path.join(root, file), 'utf8');
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const defines = (text: string, name: string): boolean =>
  new RegExp(
    `(function|class|const|let|interface|type)\\s+${escape(name)}\\b|^\\s*(async\\s+)?${escape(name)}\\s*[(<]`,
    'm',
  ).test(text);

/** `path` `symbol` `symbol` `path` `symbol` ... -> [path, symbols[]] pairs. */
function codeRefs(cell: string): Array<[string, string[]]> {
  const refs: Array<[string, string[]]> = [];
  for (const [, token] of cell.matchAll(/`([^`]+)`/g)) {
    if (token.includes('/')) refs.push([token, []]);
    else refs[refs.length - 1]?.[1].push(token);
  }
  return refs;
}

describe('docs/ARCHITECTURE.md code map', () => {
  it('has rows', () => {
    expect(rows.length).toBeGreaterThan(15);
  });

  it.each(rows.map((r) => [`${r[0]}: ${r[1]}`, r] as const))('%s', (_name, row) => {
    const [, , code, test] = row;
    const refs = codeRefs(code);
    expect(refs.length).toBeGreaterThan(0);
    for (const [file, symbols] of refs) {
      expect(existsSync(path.join(root, file)) ? file : `${file} (missing)`).toBe(file);
      const text = read(file);
      for (const s of symbols) expect(defines(text, s) ? s : `${s} not defined in ${file}`).toBe(s);
    }
    const testFile = /`([^`]+)`/.exec(test)?.[1] ?? '';
    expect(existsSync(path.join(root, testFile)) ? testFile : `${testFile} (missing)`).toBe(testFile);
    const titles = [...test.matchAll(/«([^»]+)»/g)].map((m) => m[1]);
    expect(titles.length).toBeGreaterThan(0);
    const text = read(testFile);
    for (const t of titles) expect(text.includes(t) ? t : `«${t}» not in ${testFile}`).toBe(t);
  });
});
