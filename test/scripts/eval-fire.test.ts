/**
 * scripts/eval-fire.js runs from a fresh clone with the README's set-up (`npm ci`): its help, and a small
 * evaluation that loads the detector from the TypeScript sources and scores a few images of the shared data set.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const repoRoot = path.resolve(__dirname, '../..');
const script = path.join(repoRoot, 'scripts/eval-fire.js');
const dataset = path.resolve(repoRoot, '../shared/datasets/dfire-valid/annotations.json');

const run = (...args: string[]) =>
  spawnSync(process.execPath, [script, ...args], { cwd: repoRoot, encoding: 'utf8' });

test('--help prints the options and exits 0', () => {
  const r = run('--help');
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/^usage: node scripts\/eval-fire\.js/);
  for (const option of ['--fit', '--dist', '--lower-bound', '--limit', '--json'])
    expect(r.stdout).toContain(option);
});

test('an unknown option or a bad --limit exits 1 with a message', () => {
  expect(run('--frobnicate')).toMatchObject({
    status: 1,
    stderr: expect.stringContaining('unknown argument --frobnicate'),
  });
  expect(run('--limit', '0')).toMatchObject({
    status: 1,
    stderr: expect.stringContaining('--limit needs a positive integer'),
  });
});

test('--limit 4 evaluates the first four images from the sources', () => {
  expect(existsSync(dataset)).toBe(true);
  const r = run('--limit', '4');
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/^decoded\+analysed 4 images in [\d.]+ s \(\d+ even, \d+ odd\)$/m);
  expect(r.stdout).toMatch(/^all: +images=4 P=[\d.]+ R=[\d.]+ .* AP50=[\d.]+ gtBoxes=\d+$/m);
});
