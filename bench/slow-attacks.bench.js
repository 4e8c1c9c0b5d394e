/**
 * Slow-client attacks against the standalone service. Run after `npm run build`, with slowhttptest
 * installed (Debian package `slowhttptest`):
 *
 *   node bench/slow-attacks.bench.js [--seconds 30] [--connections 1000] [--gateway-url URL --api-key KEY]
 *
 * Starts `npm start`'s entry point as a child process on free ports (or uses the given gateway), then:
 * 1. the limit: a well-behaved client calling GET /v1/vision/quota every 50 ms for 10 s, alone (its p99);
 * 2. each of slowhttptest's three attacks (slowloris, slow body, slow read; scripts/transport/slow-attack.js)
 *    with --connections connections for --seconds, the same client calling beside it.
 * Targets, per attack: the client's p99 <= 2x its p99 without the attack; no call without a 200 (no 5xx,
 * no reset, no timeout). Prints the connections the server held at the attack's peak. Ends with
 * `targets: N met, M missed`.
 */
const { parseArgs } = require('./lib/args');
const { startStandaloneChild } = require('./lib/standalone-child');
const { runAttack, wellBehaved, quantile } = require('../scripts/transport/slow-attack');
const { report } = require('./lib/targets');

const args = parseArgs(process.argv.slice(2));
const SECONDS = Number(args.seconds ?? 30);
const CONNECTIONS = Number(args.connections ?? 1000);
const KEY = args['api-key'] ?? 'bench-slow-attacks-0123456789';

async function main() {
  const svc = args['gateway-url']
    ? { url: args['gateway-url'], stop: () => undefined }
    : await startStandaloneChild({ VISION_API_KEYS: `${KEY}:bench` });
  try {
    const base = await wellBehaved(svc.url, KEY, 10);
    const baseP99 = quantile(
      base.map((c) => c.ms),
      0.99,
    );
    console.log(
      `without an attack: ${base.length} calls, p99 ${baseP99.toFixed(1)} ms (the limit: 2x = ${(2 * baseP99).toFixed(1)} ms)`,
    );
    console.log('| attack | connections held | calls | p99 (ms) | p99 / limit | not 200 | 5xx |');
    console.log('|---|---|---|---|---|---|---|');
    const checks = [];
    for (const attack of ['slowloris', 'slow-body', 'slow-read']) {
      const r = await runAttack(svc.url, KEY, attack, { seconds: SECONDS, connections: CONNECTIONS });
      const ratio = r.p99 / (2 * baseP99);
      console.log(
        `| ${attack} | ${r.connectionsHeld} | ${r.calls} | ${r.p99.toFixed(1)} | ${ratio.toFixed(2)} | ${r.failed} | ${r.fiveXx} |`,
      );
      checks.push(
        {
          name: `${attack}: p99 / 2 x p99 without an attack`,
          value: ratio.toFixed(2),
          limit: '<= 1',
          ok: ratio <= 1,
        },
        { name: `${attack}: calls not answered 200`, value: r.failed, limit: '= 0', ok: r.failed === 0 },
      );
    }
    report(checks);
  } finally {
    svc.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
