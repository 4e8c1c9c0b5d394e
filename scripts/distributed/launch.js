#!/usr/bin/env node
'use strict';
// Starts one distributed deployment (six service processes on the scripts/stack servers) and keeps it up until
// SIGINT/SIGTERM, then stops the services and drops its database and bucket (unless --keep-data).
//   node scripts/distributed/launch.js [--keys key:subject,...] [--toxiproxy] [--replicas gateway=2,results=2,images=2] [--keep-data]
//     [--env VAR=value,...]   (extra environment for every service, e.g. QUOTA_IMAGE_DAILY=1000000)
// Needs `npm run build` and the servers (scripts/stack/install.sh && scripts/stack/start.sh).
const { Deployment } = require('./launcher');

function parseArgs(argv) {
  const o = { replicas: {}, env: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--keys') o.keys = argv[++i];
    else if (a === '--toxiproxy') o.toxiproxy = true;
    else if (a === '--keep-data') o.keepData = true;
    else if (a === '--log-dir') o.logDir = argv[++i];
    else if (a === '--env')
      for (const kv of argv[++i].split(',')) {
        const at = kv.indexOf('=');
        if (at < 1) throw new Error(`--env: expected VAR=value, got ${kv}`);
        o.env[kv.slice(0, at)] = kv.slice(at + 1);
      }
    else if (a === '--replicas')
      for (const kv of argv[++i].split(',')) {
        const [k, v] = kv.split('=');
        o.replicas[k] = Number(v);
      }
    else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const d = new Deployment({
    keys: opts.keys,
    env: opts.env,
    toxiproxy: opts.toxiproxy,
    replicas: opts.replicas,
    logDir: opts.logDir,
    logLevel: process.env.LOG_LEVEL || 'info',
  });
  await d.start();
  process.stdout.write(`gateway ${d.url}\ndatabase ${d.database}\nbucket ${d.bucket}\nlogs ${d.logDir}\n`);
  for (const [name, procs] of Object.entries(d.procs))
    for (const p of procs)
      process.stdout.write(`  ${name}#${p.index + 1} ${p.url} pid ${p.child.pid} metrics ${p.metricsUrl}\n`);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    d.close({ keepData: opts.keepData }).then(
      () => process.exit(0),
      (err) => {
        process.stderr.write(`${err.stack}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err) => {
  process.stderr.write(`launch failed: ${err.stack || err}\n`);
  process.exit(1);
});
