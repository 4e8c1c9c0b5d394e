'use strict';
/**
 * CPU time of processes and threads from /proc (Linux), for benches that measure what a deployment spends:
 * utime + stime of /proc/<pid>/stat, in ms (100 clock ticks a second: a resolution of 10 ms).
 * - `treeCpuMs(pid)`: a process and all its descendants, each counted with the CPU of its children that ended
 *   and were waited for (cutime + cstime), so a server that forks per connection (Postgres) is counted whole;
 * - `threadsCpuMs(pid)`: each thread of one process by its name (/proc/<pid>/task/<tid>/comm, trailing digits
 *   dropped so that a pool's threads add up), the main thread as `main`.
 */
const fs = require('node:fs');

const TICK_MS = 1000 / 100;

/** The fields after the command of a stat line: index 0 is the state, 1 ppid, 11 utime, 12 stime, 13 cutime, 14 cstime. */
function statFields(file) {
  try {
    const s = fs.readFileSync(file, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // ended meanwhile
  }
}

/** Every process's parent, from one pass over /proc. */
function parents() {
  const out = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const f = statFields(`/proc/${d}/stat`);
    if (f) out.set(Number(d), Number(f[1]));
  }
  return out;
}

/** CPU ms of each of `pids` with its descendants: { [pid]: ms }. */
function treesCpuMs(pids) {
  const ppid = parents();
  const children = new Map();
  for (const [p, pp] of ppid) {
    if (!children.has(pp)) children.set(pp, []);
    children.get(pp).push(p);
  }
  const out = {};
  for (const root of pids) {
    let ticks = 0;
    const stack = [root];
    while (stack.length) {
      const p = stack.pop();
      const f = statFields(`/proc/${p}/stat`);
      if (f) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      stack.push(...(children.get(p) ?? []));
    }
    out[root] = ticks * TICK_MS;
  }
  return out;
}

/** CPU ms of one process's threads, summed by name ({ main: ms, ... }). */
function threadsCpuMs(pid) {
  const out = {};
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    const f = statFields(`/proc/${pid}/task/${tid}/stat`);
    if (!f) continue;
    let name = 'main';
    if (tid !== String(pid)) {
      try {
        name = fs
          .readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8')
          .trim()
          .replace(/[-_ ]?\d+$/, '');
      } catch {
        continue;
      }
    }
    out[name] = (out[name] ?? 0) + (Number(f[11]) + Number(f[12])) * TICK_MS;
  }
  return out;
}

/** `after - before` for each key of either (a thread or process that appeared counts from 0). */
function delta(before, after) {
  const out = {};
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)]))
    out[k] = (after[k] ?? 0) - (before[k] ?? 0);
  return out;
}

/** The pid a server's pid file names, while that process runs; undefined otherwise. */
function runningPid(pidFile) {
  try {
    const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
    return fs.existsSync(`/proc/${pid}`) ? pid : undefined;
  } catch {
    return undefined;
  }
}

module.exports = { treesCpuMs, threadsCpuMs, delta, runningPid };
