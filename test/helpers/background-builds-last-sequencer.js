/**
 * jest's test order (jest.config.js): jest's own (failed first, then the longest), except that in the distributed
 * suite (E2E_STACK=distributed) the files that need what the set-up builds in the background run last: those that
 * read traces or series (they call awaitObservabilityBackends, test/helpers/observability.ts) and those that render
 * the chart (they call ensureHelm). On a fresh machine the set-up is still building Jaeger, Prometheus and helm when
 * the suite starts (scripts/stack/session.sh starts the servers once built): every other file runs meanwhile,
 * instead of the whole suite waiting for the build (a cold run's chart file waited 4 minutes for helm at the head
 * of the suite). Before them, the files that run several inference replicas (below).
 */
const fs = require('node:fs');
const Sequencer = require('@jest/test-sequencer').default;

const NEEDS_A_BACKGROUND_BUILD = /\b(awaitObservabilityBackends|ensureHelm)\(\)/;
/**
 * Several job-running inference replicas under video tasks: the heaviest files on the cores. In `npm test` the node's
 * phase runs video jobs of its own beside the distributed suite's first half hour, and the two together ran out of
 * time; these files go after the others (and before those waiting for a build, done by then).
 */
const RUNS_INFERENCE_REPLICAS = /replicas:\s*\{[^}]*\binference:\s*[2-9]/;

function contents(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

class BackgroundBuildsLastSequencer extends Sequencer {
  async sort(tests) {
    const ordered = await super.sort(tests);
    if (process.env.E2E_STACK !== 'distributed') return ordered;
    const text = new Map(ordered.map((t) => [t, contents(t.path)]));
    const last = ordered.filter((t) => NEEDS_A_BACKGROUND_BUILD.test(text.get(t)));
    const heavy = ordered.filter((t) => !last.includes(t) && RUNS_INFERENCE_REPLICAS.test(text.get(t)));
    return [...ordered.filter((t) => !last.includes(t) && !heavy.includes(t)), ...heavy, ...last];
  }
}

module.exports = BackgroundBuildsLastSequencer;
