/**
 * The text files of the repository that speak to a reader: the docs, the README, and the sources, tests, scripts,
 * benches, chart and CI files, whose comments, strings and test names are read too. Dependencies, build output,
 * generated code, training runs and recorded bench output are left out.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export const repoRoot = path.resolve(__dirname, '../..');

const FOLDERS = [
  'docs',
  'services',
  'packages',
  'apps',
  'scripts',
  'test',
  'bench',
  'charts',
  '.ci',
  'training',
  'deploy',
];
const FILES = [
  'README.md',
  'Dockerfile',
  'docker-compose.yml',
  'jest.config.js',
  'eslint.config.mjs',
  'knip.jsonc',
  '.ci/run',
];
const ENDINGS = /\.(md|ts|tsx|js|cjs|mjs|sh|ya?ml|py|json|jsonc|toml|txt)$/;
const SKIPPED = new Set(['node_modules', 'dist', 'generated', 'runs', 'coverage', '.git', 'test-artifacts']);

function walk(dir: string, out: string[]): void {
  for (const name of readdirSync(dir)) {
    if (SKIPPED.has(name)) continue;
    const full = path.join(dir, name);
    const st = statSync(full);
    if (st.isDirectory()) walk(full, out);
    else if (ENDINGS.test(name) && st.size < 2_000_000) out.push(full);
  }
}

/** Every such file, relative to the repository root. */
export function repoTextFiles(): string[] {
  const out: string[] = [];
  for (const f of FOLDERS) if (existsSync(path.join(repoRoot, f))) walk(path.join(repoRoot, f), out);
  for (const f of FILES) if (existsSync(path.join(repoRoot, f))) out.push(path.join(repoRoot, f));
  return [...new Set(out.map((f) => path.relative(repoRoot, f)))].filter(
    (f) => !f.endsWith('package-lock.json') && !f.startsWith('bench/results/'),
  );
}
