/**
 * jest's test order (jest.config.js): jest's own (failed first, then the longest), except that in the distributed
 * suite (E2E_STACK=distributed) the files that read traces or series (those that call awaitObservabilityBackends,
 * test/helpers/observability.ts) run last. On a fresh machine the set-up is still
 * building Jaeger and Prometheus when the suite starts (scripts/stack/session.sh starts them once built): every other
 * file runs meanwhile, instead of the whole suite waiting for the build.
 */
const fs = require('node:fs');
const Sequencer = require('@jest/test-sequencer').default;

const READS_TRACES = /\bawaitObservabilityBackends\(\)/;

function readsTraces(file) {
  try {
    return READS_TRACES.test(fs.readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
}

class ObservabilityLastSequencer extends Sequencer {
  async sort(tests) {
    const ordered = await super.sort(tests);
    if (process.env.E2E_STACK !== 'distributed') return ordered;
    const last = ordered.filter((t) => readsTraces(t.path));
    return [...ordered.filter((t) => !last.includes(t)), ...last];
  }
}

module.exports = ObservabilityLastSequencer;
