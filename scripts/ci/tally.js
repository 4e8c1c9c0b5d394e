#!/usr/bin/env node
/**
 * CI's closing line. Adds up the counts that the test runners left behind and prints them as one plain line,
 * `ci: N passed, N failed, N skipped`, so that the whole run ends on its real totals (schemathesis closes on a
 * pytest-like line such as "1 warning in 300.03s", which reads as a run that executed no test).
 *   node scripts/ci/tally.js TALLY_FILE [JUNIT_DIR ...]
 * TALLY_FILE holds the JSON lines of scripts/ci/tally-reporter.js (jest); each JUNIT_DIR holds JUnit XML reports
 * (schemathesis), counted from their <testsuite> totals. Exits 1 when nothing passed or anything failed.
 */
const fs = require('node:fs');
const path = require('node:path');

const [tallyFile, ...junitDirs] = process.argv.slice(2);
const total = { passed: 0, failed: 0, skipped: 0 };
const add = (c) => {
  total.passed += c.passed;
  total.failed += c.failed;
  total.skipped += c.skipped;
};

if (tallyFile && fs.existsSync(tallyFile)) {
  for (const line of fs.readFileSync(tallyFile, 'utf8').split('\n')) if (line.trim()) add(JSON.parse(line));
}

const attr = (tag, name) => Number((new RegExp(`\\b${name}="(\\d+)"`).exec(tag) ?? [])[1] ?? 0);
for (const dir of junitDirs) {
  if (!fs.existsSync(dir)) continue;
  for (const name of fs.readdirSync(dir).filter((n) => n.endsWith('.xml'))) {
    const xml = fs.readFileSync(path.join(dir, name), 'utf8');
    for (const [tag] of xml.matchAll(/<testsuite\b[^>]*>/g)) {
      const tests = attr(tag, 'tests');
      const failed = attr(tag, 'failures') + attr(tag, 'errors');
      const skipped = attr(tag, 'skipped');
      add({ passed: tests - failed - skipped, failed, skipped });
    }
  }
}

console.log(`ci: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
if (total.passed === 0 || total.failed > 0) process.exit(1);
