/**
 * docs/QUICKSTART.md runs on a fresh machine with the set-up it names: every command of its shell blocks is one
 * of the tools it says it needs (Node.js and npm from the README's set-up, curl, jq), not one a fresh Debian lacks.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

const DOC = readFileSync(path.join(__dirname, '../../docs/QUICKSTART.md'), 'utf8');
const NEEDED = ['npm', 'node', 'curl', 'jq'];

/** The programs a shell block runs: the first word of each command, in pipes, lists and `$(...)` too. */
function programsOf(block: string): string[] {
  const text = block
    .replace(/#.*$/gm, '')
    .replace(/\\\n/g, ' ')
    .replace(/'[^']*'/g, "''");
  return text
    .split(/\n|\||&&|;|\$\(|\)/)
    .map((command) => command.trim().replace(/^[A-Z_]+=\S*\s*/, ''))
    .map((command) => command.split(/\s+/)[0].replace(/["']/g, ''))
    .filter((word) => word !== '' && !/^[A-Z_]+=/.test(word));
}

describe('docs/QUICKSTART.md', () => {
  const blocks = [...DOC.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]);

  it('has shell blocks to check', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(5);
  });

  it('runs only the tools it names as needed', () => {
    const programs = new Set(blocks.flatMap(programsOf));
    expect([...programs].filter((p) => !NEEDED.includes(p))).toEqual([]);
    expect(programs).toEqual(new Set(NEEDED));
  });

  it('names every tool it runs among what it needs', () => {
    const needs = DOC.slice(DOC.indexOf('You need'), DOC.indexOf('## 1.'));
    for (const tool of ['curl', 'jq', 'Node.js']) expect(needs).toContain(tool);
    expect(needs).not.toMatch(/uuidgen/);
  });
});
