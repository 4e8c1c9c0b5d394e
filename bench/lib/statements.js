'use strict';
/**
 * The cost bench's side of bench/lib/statements-preload.js: the node arguments that preload it, `read(pids)`,
 * which asks each process for its counts (SIGUSR2) and sums them by service, and `printCounts`.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const PRELOAD = path.join(__dirname, 'statements-preload.js');

/** A directory for the counts, and the environment and node arguments a service process needs to write them. */
function statementCounting() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-statements-'));
  const last = new Map();
  const readOne = async (pid) => {
    const file = path.join(dir, `${pid}.json`);
    const before = last.get(pid) ?? 0;
    process.kill(pid, 'SIGUSR2');
    for (let i = 0; i < 200; i++) {
      try {
        const c = JSON.parse(fs.readFileSync(file, 'utf8'));
        if (c.dumps > before) {
          last.set(pid, c.dumps);
          return c;
        }
      } catch {
        // Not written yet.
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`process ${pid} wrote no statement counts`);
  };
  return {
    env: { VISION_STATEMENTS_DIR: dir },
    nodeArgs: ['--require', PRELOAD],
    /** Statements and messages by service so far, summed over `pids`. */
    async read(pids) {
      const sum = { statements: {}, messages: {} };
      for (const c of await Promise.all(pids.map(readOne)))
        for (const kind of ['statements', 'messages'])
          for (const [k, v] of Object.entries(c[kind])) sum[kind][k] = (sum[kind][k] ?? 0) + v;
      return sum;
    },
    close: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * Prints the statements and the messages of `rounds` (each `{ statements, messages }`, by service, per `unit`):
 * the median of their totals and each service's median. Nothing when they were not counted.
 */
function printCounts(rounds, unit) {
  for (const kind of ['statements', 'messages']) {
    if (!rounds[0][kind]) continue;
    const keys = [...new Set(rounds.flatMap((r) => Object.keys(r[kind])))].sort();
    const each = keys.map((k) => `${k} ${median(rounds.map((r) => r[kind][k] ?? 0)).toFixed(1)}`);
    const sum = median(rounds.map((r) => Object.values(r[kind]).reduce((x, y) => x + y, 0)));
    console.log(`  ${kind} per ${unit}: ${sum.toFixed(1)} (${each.join(', ')})`);
  }
}

module.exports = { statementCounting, printCounts };
