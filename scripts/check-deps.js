#!/usr/bin/env node
// The installed tree is what package.json and the lockfile say (`npm run deps:check`, after knip):
//  - `npm ls --all` reports no missing, invalid or extraneous package;
//  - each @opentelemetry/* package is installed in one version only (the API and SDK share state through their
//    global registrations, and two copies of one package keep separate state).
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const ls = spawnSync('npm', ['ls', '--all', '--json'], {
  cwd: root,
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
});
let tree;
try {
  tree = JSON.parse(ls.stdout);
} catch {
  console.error(`npm ls --all gave no JSON (exit ${ls.status}):\n${ls.stderr}`);
  process.exit(1);
}

const problems = [...(tree.problems ?? [])];
const versions = new Map();
(function walk(deps) {
  for (const [name, dep] of Object.entries(deps ?? {})) {
    if (name.startsWith('@opentelemetry/') && dep.version) {
      if (!versions.has(name)) versions.set(name, new Set());
      versions.get(name).add(dep.version);
    }
    walk(dep.dependencies);
  }
})(tree.dependencies);
for (const [name, set] of versions) {
  if (set.size > 1)
    problems.push(`${name} is installed in ${set.size} versions: ${[...set].sort().join(', ')}`);
}

if (problems.length > 0) {
  console.error(`dependency tree: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`dependency tree: no problems; ${versions.size} @opentelemetry packages, one version each`);
