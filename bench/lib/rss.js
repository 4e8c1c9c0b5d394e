/** The resident memory of the processes a bench loads, read from /proc. */
const fs = require('node:fs');

/**
 * Samples the RSS of each process (`readEach()`: MB per process) every 250 ms from `startEach`; stop() gives the
 * peak of each and of their sum, and how much each grew over its start. A deployment's processes are bounded each on its own, as each pod has its limit.
 */
function sampleRss(readEach, startEach) {
  const peakEach = startEach.slice();
  let peakSum = startEach.reduce((a, b) => a + b, 0);
  const timer = setInterval(() => {
    const each = readEach();
    each.forEach((mb, i) => (peakEach[i] = Math.max(peakEach[i], mb)));
    peakSum = Math.max(
      peakSum,
      each.reduce((a, b) => a + b, 0),
    );
  }, 250);
  return {
    stop() {
      clearInterval(timer);
      return { peakEach, peakSum, growthEach: peakEach.map((mb, i) => mb - startEach[i]) };
    },
  };
}

/** The RSS of the processes `pids` together, in MB (a process gone counts 0). */
function rssMbOf(pids) {
  let sum = 0;
  for (const pid of pids) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) sum += Number(m[1]) / 1024;
    } catch {
      // gone
    }
  }
  return sum;
}

module.exports = { rssMbOf, sampleRss };
