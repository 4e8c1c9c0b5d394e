/**
 * A jest reporter for CI's closing tally: when VISION_TEST_TALLY names a file, every jest run appends one JSON line
 * with its counts ({"runner":"jest","passed":N,"failed":N,"skipped":N}); scripts/ci/tally.js adds them up.
 * Without the variable it does nothing (jest's default reporter still prints everything).
 */
const fs = require('node:fs');

class TallyReporter {
  onRunComplete(_contexts, results) {
    const file = process.env.VISION_TEST_TALLY;
    if (!file) return;
    const line = {
      runner: 'jest',
      passed: results.numPassedTests,
      failed: results.numFailedTests + results.numRuntimeErrorTestSuites,
      skipped: results.numPendingTests + results.numTodoTests,
    };
    fs.appendFileSync(file, `${JSON.stringify(line)}\n`);
  }
}

module.exports = TallyReporter;
