/**
 * jest's test order (jest.config.js): jest's own (failed first, then the longest), except that in the distributed
 * suite (E2E_STACK=distributed) the files that need what the set-up builds in the background run last: those that
 * read traces or series (they call awaitObservabilityBackends, test/helpers/observability.ts) and those that render
 * the chart (they call ensureHelm). On a fresh machine the set-up is still building Jaeger, Prometheus and helm when
 * the suite starts (scripts/stack/session.sh starts the servers once built): every other file runs meanwhile,
 * instead of the whole suite waiting for the build (a cold run's chart file waited 4 minutes for helm at the head
 * of the suite).
 */
const fs = require('node:fs');
const Sequencer = require('@jest/test-sequencer').default;

const NEEDS_A_BACKGROUND_BUILD = /\b(awaitObservabilityBackends|ensureHelm)\(\)/;

function needsABackgroundBuild(file) {
  try {
    return NEEDS_A_BACKGROUND_BUILD.test(fs.readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
}

class BackgroundBuildsLastSequencer extends Sequencer {
  async sort(tests) {
    const ordered = await super.sort(tests);
    if (process.env.E2E_STACK !== 'distributed') return ordered;
    const last = ordered.filter((t) => needsABackgroundBuild(t.path));
    return [...ordered.filter((t) => !last.includes(t)), ...last];
  }
}

module.exports = BackgroundBuildsLastSequencer;
