/**
 * The code map of docs/ARCHITECTURE.md (SPEC rule -> file and function -> test) stays true: every file it names
 * exists, every function, class or constant it names is defined in that file, and every test it quotes («...») is
 * in the test file it names. The rest of the document too: every path it names exists (a path relative to a
 * service, such as `store/task-claims.ts`, in some package), and every function, class or method it names
 * (`decideClaim`, `IdempotentRequests.handle`) is in the sources.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const doc = readFileSync(path.join(root, 'docs/ARCHITECTURE.md'), 'utf8');
const fromCodeMap = doc.slice(doc.indexOf('## Code map'));
const section = fromCodeMap.slice(
  0,
  fromCodeMap.indexOf('\n## ', 5) > 0 ? fromCodeMap.indexOf('\n## ', 5) : undefined,
);
const rows = section
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

/** Every file and folder under the packages, services and apps, relative to the repository root. */
function sourceTree(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(path.join(root, dir))) {
      if (name === 'node_modules' || name === 'dist') continue;
      const rel = `${dir}/${name}`;
      const dirEntry = statSync(path.join(root, rel)).isDirectory();
      out.push(dirEntry ? `${rel}/` : rel);
      if (dirEntry) walk(rel);
    }
  };
  for (const top of ['packages', 'services', 'apps']) walk(top);
  return out;
}

/** Names of other projects' APIs the document discusses, and placeholders: not looked for in our sources. */
const NOT_OURS = new Set(['KafkaJS', 'createX', 'createX(deps)']);
const TOP = /^(packages|services|apps|test|scripts|charts|docs|bench|deploy|training|models)\//;

describe('docs/ARCHITECTURE.md outside the code map', () => {
  const prose = doc.replace(/```[\s\S]*?```/g, '').replace(section, '');
  const tokens = [...new Set([...prose.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]))];
  const tree = sourceTree();
  const sources = tree
    .filter((f) => /\/src\/.*\.ts$/.test(f))
    .map((f) => read(f))
    .join('\n');

  const paths = tokens.filter(
    (t) => /^[\w.-]+(\/[\w@.-]*)*$/.test(t) && (t.includes('/') || /\.(ts|js|mjs|ya?ml|json|md)$/.test(t)),
  );
  const names = tokens.filter(
    (t) => /^[A-Za-z_]\w*(\.\w+)?$/.test(t) && /[a-z]/.test(t) && /[A-Z]/.test(t) && !NOT_OURS.has(t),
  );

  it('names paths and functions', () => {
    expect(paths.length).toBeGreaterThan(20);
    expect(names.length).toBeGreaterThan(10);
  });

  it.each(paths.map((p) => [p]))('the path %s exists', (p) => {
    const found =
      TOP.test(p) || !p.includes('/')
        ? existsSync(path.join(root, p)) || tree.some((f) => f.endsWith(`/${p}`))
        : tree.some((f) => f.endsWith(`/${p}`) || f.endsWith(`/${p}/`));
    expect(found ? p : `${p} (not found)`).toBe(p);
  });

  it.each(names.map((n) => [n]))('%s is in the sources', (n) => {
    for (const part of n.split('.'))
      expect(new RegExp(`\\b${escape(part)}\\b`).test(sources) ? part : `${part} (not found)`).toBe(part);
  });
});
