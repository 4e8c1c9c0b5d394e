/**
 * `npm start`'s entry point as a child process of a bench, on free ports and a fresh data directory:
 * `{ pid, url, rssMb(), rssMbEach(), stop() }` once it printed that it is up.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const { rssMbOf } = require('./rss');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');
const MAIN = path.join(root, 'apps/standalone/dist/main.js');

const { freePort } = require('../../scripts/distributed/ports');

/**
 * Starts the process with `env` on top of this one's; the internal services pick free loopback ports.
 * `nodeArgs` go to node before the entry point (for example `--cpu-prof --cpu-prof-dir DIR`).
 */
async function startStandaloneChild(env, nodeArgs = []) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-standalone-'));
  const port = String(await freePort());
  const metricsPort = String(await freePort());
  const child = spawn(process.execPath, [...nodeArgs, MAIN], {
    env: {
      ...process.env,
      PORT: port,
      METRICS_PORT: metricsPort,
      VISION_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((resolve, reject) => {
    let out = '';
    const read = (c) => {
      out += c.toString();
      if (!out.includes(' is up at ')) return;
      // Up: what it logs from now on is read and dropped, at no cost to the bench's own measures.
      child.stdout.off('data', read);
      child.stdout.resume();
      resolve();
    };
    child.stdout.on('data', read);
    child.once('exit', (code) => reject(new Error(`standalone exited with ${code}`)));
  });
  return {
    pid: child.pid,
    url: `http://127.0.0.1:${port}`,
    rssMb: () => rssMbOf([child.pid]),
    /** The RSS of each process of the service: the one. */
    rssMbEach: () => [rssMbOf([child.pid])],
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    /** CPU time the process used so far, user and system, in seconds (/proc/PID/stat, 100 ticks a second). */
    cpuSeconds: () => {
      const fields = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100;
    },
    stop: () => {
      child.kill('SIGTERM');
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

module.exports = { MAIN, freePort, startStandaloneChild };
