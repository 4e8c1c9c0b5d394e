#!/usr/bin/env node
/**
 * The time table at the end of `npm test` (scripts/test-all.sh):
 *   node scripts/ci/report.js PHASES_FILE [TIMES_FILE]
 * PHASES_FILE holds "name<TAB>seconds<TAB>exit status[<TAB>beside<TAB>CPU busy %]" lines, one per phase (CPU busy:
 * the share of the machine's cores busy while it ran, with whatever ran beside it); TIMES_FILE the per-file JSON lines of
 * scripts/ci/tally-reporter.js. Prints each phase's time and the total, then the 20 slowest test files with the
 * time their tests took and the time around them (module loading, starting and stopping stacks), and those two
 * summed over every file of each jest run.
 */
const fs = require('node:fs');

const [phasesFile, timesFile] = process.argv.slice(2);
const lines = (f) =>
  f && fs.existsSync(f)
    ? fs
        .readFileSync(f, 'utf8')
        .split('\n')
        .filter((l) => l.trim())
    : [];
const clock = (s) => `${Math.floor(s / 60)} min ${String(Math.round(s % 60)).padStart(2, '0')} s`;

// A phase marked "beside" (4th column 1) ran at the same time as another one: the total leaves it out.
const phases = lines(phasesFile).map((l) => {
  const [name, seconds, status, beside, busy] = l.split('\t');
  return { name, seconds: Number(seconds), status: Number(status), beside: beside === '1', busy };
});
if (phases.length) {
  console.log('\n| phase | time | CPU busy | result |\n|---|---|---|---|');
  for (const p of phases)
    console.log(
      `| ${p.name} | ${clock(p.seconds)} | ${p.busy ? `${p.busy} %` : '-'} | ${p.status === 0 ? 'passed' : `exit ${p.status}`} |`,
    );
  const total = phases.filter((p) => !p.beside).reduce((s, p) => s + p.seconds, 0);
  console.log(`| **total** (phases run beside another not added) | **${clock(total)}** | | |`);
}

const files = lines(timesFile).map((l) => JSON.parse(l));
if (files.length) {
  const byStack = new Map();
  for (const f of files) {
    const s = byStack.get(f.stack) ?? { files: 0, seconds: 0, testSeconds: 0 };
    s.files++;
    s.seconds += f.seconds;
    s.testSeconds += f.testSeconds;
    byStack.set(f.stack, s);
  }
  console.log(
    '\n| jest run | files | file time | in tests | around tests (loading, stacks) |\n|---|---|---|---|---|',
  );
  for (const [stack, s] of byStack)
    console.log(
      `| ${stack} | ${s.files} | ${clock(s.seconds)} | ${clock(s.testSeconds)} | ${clock(s.seconds - s.testSeconds)} |`,
    );
  console.log('\n| slowest test files | run | time | in tests | around tests |\n|---|---|---|---|---|');
  for (const f of [...files].sort((a, b) => b.seconds - a.seconds).slice(0, 20))
    console.log(
      `| ${f.file} | ${f.stack} | ${f.seconds.toFixed(0)} s | ${f.testSeconds.toFixed(0)} s | ${(f.seconds - f.testSeconds).toFixed(0)} s |`,
    );
}
