/**
 * Summarises a V8 CPU profile written by `node --cpu-prof` (docs/PERFORMANCE.md, "Running the benches"):
 *
 *   node bench/profile-summary.js PROFILE.cpuprofile [--top 25] [--from-s S] [--to-s S]
 *
 * Prints the self time of the busiest functions and the self time per source file / package, as
 * shares of the sampled time (idle and garbage collection listed apart). --from-s / --to-s keep only the samples
 * taken that many seconds after the profile started (a bench that profiles a whole process prints its window).
 */
const fs = require('node:fs');
const { parseArgs } = require('./lib/args');

const [file, ...rest] = process.argv.slice(2);
if (!file) throw new Error('usage: node bench/profile-summary.js PROFILE.cpuprofile [--top 25]');
const args = parseArgs(rest);
const top = Number(args.top ?? 25);
const prof = JSON.parse(fs.readFileSync(file, 'utf8'));

const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const fromUs = Number(args['from-s'] ?? 0) * 1e6;
const toUs = Number(args['to-s'] ?? Infinity) * 1e6;
const self = new Map();
let at = 0;
for (let i = 0; i < prof.samples.length; i++) {
  const dt = prof.timeDeltas[i] ?? 0;
  at += dt;
  if (at < fromUs || at > toUs) continue;
  self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + dt);
}
const total = [...self.values()].reduce((a, b) => a + b, 0);

/** Where a function lives: a package under node_modules, a workspace file, or node's own. */
function place(url) {
  if (!url) return '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (url.startsWith('node:')) return url;
  const m = url.match(/(services|packages)\/[^/]+\/dist\/.*$/) ?? url.match(/bench\/.*$/);
  return m ? m[0] : url;
}

const fnTime = new Map();
const placeTime = new Map();
for (const [id, t] of self) {
  const n = byId.get(id);
  const cf = n.callFrame;
  const name = `${cf.functionName || '(anonymous)'} ${place(cf.url)}${cf.url ? `:${cf.lineNumber + 1}` : ''}`;
  fnTime.set(name, (fnTime.get(name) ?? 0) + t);
  const p = ['(idle)', '(garbage collector)', '(program)'].includes(cf.functionName)
    ? cf.functionName
    : place(cf.url);
  placeTime.set(p, (placeTime.get(p) ?? 0) + t);
}
const pct = (t) => `${((100 * t) / total).toFixed(1).padStart(5)}%`;
const show = (title, m) => {
  console.log(title);
  for (const [k, t] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`  ${pct(t)} ${(t / 1000).toFixed(0).padStart(7)} ms  ${k}`);
};
console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled`);
show('self time by function', fnTime);
show('self time by place', placeTime);
