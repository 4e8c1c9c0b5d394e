/**
 * A jest reporter for CI's closing lines (scripts/test-all.sh). Without its variables it does nothing (jest's
 * default reporter still prints everything).
 * - VISION_TEST_TALLY: every jest run appends one JSON line with its counts
 *   ({"runner":"jest","passed":N,"failed":N,"skipped":N}); scripts/ci/tally.js adds them up.
 * - VISION_TEST_TIMES: every test file appends one JSON line {"file","seconds","testSeconds","tests"}: its whole
 *   time, and the part its tests took (the rest is module loading and beforeAll/afterAll: starting and stopping
 *   stacks); scripts/ci/report.js lists the slowest.
 */
const fs = require('node:fs');
const path = require('node:path');

class TallyReporter {
  onTestResult(_test, result) {
    const file = process.env.VISION_TEST_TIMES;
    if (!file) return;
    const stats = result.perfStats ?? {};
    const line = {
      file: path.relative(process.cwd(), result.testFilePath),
      stack: `${process.env.E2E_STACK ?? 'standalone'}${process.env.KAFKA_VERSION ? ` (Kafka ${process.env.KAFKA_VERSION})` : ''}`,
      seconds: Math.max(0, ((stats.end ?? 0) - (stats.start ?? 0)) / 1000),
      testSeconds: result.testResults.reduce((sum, t) => sum + (t.duration ?? 0), 0) / 1000,
      tests: result.testResults.length,
    };
    fs.appendFileSync(file, `${JSON.stringify(line)}\n`);
  }

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
