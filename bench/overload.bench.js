/**
 * Overload: what the service does when offered four times what it can serve. Run after `npm run build`:
 *
 *   node bench/overload.bench.js [--seconds 60] [--limit fixed|gradient] [--door reports|gradient|off]
 *                                [--profile-dir DIR] [--capacity C]
 *                                [--gateway-url URL --keys k1,k2,... --metrics-url URL --pids p1,p2,...]
 *
 * Starts `npm start`'s entry point as a child process on free ports with 20 keys and
 * `ADMISSION_LIMIT=<--limit>` (default fixed; docs/OVERLOAD.md), or uses the given gateway and keys
 * (whose limit is the one that service was started with; --limit is refused there), then, with the
 * open-loop generator of scripts/overload/open-loop.js (one 155 KB JPEG a call, a fresh Idempotency-Key each):
 * 1. unloaded: 2 calls/s for 3 s (warm-up), then for 8 s: the p50 and p99 of a call, and the process's RSS;
 * 2. capacity C: rates rising by 5/s, 8 s each, until one is not served whole (every call 201) with its
 *    p99 under 1 s: C is the last one that was;
 * 3. 4 x C for --seconds from the 20 subjects (each within its own limits), sampling the RSS;
 * 4. five seconds after the load stops, one call alone.
 * During 4 x C every fourth call is sent with `Expect: 100-continue` (as curl sends a large upload), and
 * the bench samples the gateway's accept queue, its event-loop delay and the requests waiting for an
 * upstream connection (bench/lib/load-probes.js), and the service's CPU: the CPU of a served call is
 * read at C (all served), that of a refused call from a burst at 4 x C (at least 100/s) with every turn held, less the
 * service's idle CPU and the burst's served calls at that cost, beside the floor under it (a bare node:http
 * server that reads the body away and answers 503, bench/lib/refusal-floor.js).
 * --door sets GATEWAY_ADMISSION of the started process. With --gateway-url, --metrics-url is the
 * gateway's metrics endpoint and --pids the service processes whose CPU and RSS are counted.
 * Targets: goodput >= 0.9 C; p99 of the 201s <= the queue bound (IMAGES_QUEUE_MAX_WAIT_MS, 1 s) + 2 x the
 * unloaded p99; every other call a 503 with Retry-After, their p99 <= 100 ms after the last byte, and
 * after the head for an Expect client, which sent no byte of its body; no reset or client timeout; each process's
 * peak RSS <= its unloaded RSS + 300 MB (with --pids, each on its own, as each pod has its own memory limit; their sum
 * is printed); quota used = the 201s; the call after the load within 2 x the unloaded p99. Ends with `targets: N met, M missed`.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('./lib/args');
const { startStandaloneChild } = require('./lib/standalone-child');
const { openLoop, quantile } = require('../scripts/overload/open-loop');
const { report } = require('./lib/targets');
const { rssMbOf, sampleRss } = require('./lib/rss');
const { refusalFloorMs } = require('./lib/refusal-floor');
const {
  startProbes,
  startTimeSplit,
  refusalCosts,
  cpuSecondsOf: pidsCpuSeconds,
  machineBusySeconds,
  usageSeconds: cpuSecondsOf,
} = require('./lib/load-probes');

const root = path.resolve(__dirname, '..');
const args = parseArgs(process.argv.slice(2));
const SECONDS = Number(args.seconds ?? 60);
const SHARED_DIR = process.env.VISION_SHARED_DIR ?? path.resolve(root, '../shared');
const IMAGE = fs.readFileSync(path.join(SHARED_DIR, 'media/images/street_people_car_coco9891.jpg'));
const KEYS = args.keys
  ? args.keys.split(',')
  : Array.from({ length: 20 }, (_, i) => `bench-overload-${i}-0123456789`);
const QUEUE_BOUND_MS = 1000;
const LIMIT = args.limit ?? 'fixed';
if (LIMIT !== 'fixed' && LIMIT !== 'gradient')
  throw new Error(`--limit: expected fixed or gradient, got ${LIMIT}`);
if (args.limit && args['gateway-url'])
  throw new Error('--limit sets the started process; with --gateway-url, start that service with it');
const DOOR = args.door ?? 'reports';
if (!['reports', 'gradient', 'off'].includes(DOOR))
  throw new Error(`--door: expected reports, gradient or off, got ${DOOR}`);
const PIDS = args.pids ? args.pids.split(',').map(Number) : [];
/** The limit in the header lines. */
const LIMIT_SHOWN = args['gateway-url'] ? "the given service's" : LIMIT;

/** --profile-dir DIR: the started process writes a V8 CPU profile there when it stops (bench/profile-summary.js). */
const PROFILE_ARGS = args['profile-dir'] ? ['--cpu-prof', '--cpu-prof-dir', args['profile-dir']] : [];

const ms = (x) => `${x.toFixed(0)} ms`;

async function main() {
  const svc = args['gateway-url']
    ? {
        url: args['gateway-url'],
        metricsUrl: args['metrics-url'],
        rssMbEach: () => PIDS.map((pid) => rssMbOf([pid])),
        cpuSeconds: PIDS.length ? () => pidsCpuSeconds(PIDS) : undefined,
        stop: () => undefined,
      }
    : await startStandaloneChild(
        {
          VISION_MODELS_DIR: process.env.VISION_MODELS_DIR ?? path.join(SHARED_DIR, 'models'),
          VISION_API_KEYS: KEYS.map((k, i) => `${k}:overload-${i}`).join(','),
          QUOTA_IMAGE_DAILY: '1000000',
          IMAGES_QUEUE_MAX_WAIT_MS: String(QUEUE_BOUND_MS),
          ADMISSION_LIMIT: LIMIT,
          GATEWAY_ADMISSION: DOOR,
        },
        PROFILE_ARGS,
      );
  console.log(
    `overload: ${KEYS.length} keys, ADMISSION_LIMIT ${LIMIT_SHOWN}, GATEWAY_ADMISSION ${args['gateway-url'] ? "the given service's" : DOOR}, 4 x C for ${SECONDS} s; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  try {
    const every = [];
    const run = async (rate, seconds, expectEvery = 0) => {
      const rs = await openLoop({ url: svc.url, rate, seconds, keys: KEYS, image: IMAGE, expectEvery });
      every.push(...rs);
      return rs;
    };
    await run(2, 3); // warm-up, not measured: a fresh deployment's first calls took seconds
    const unloaded = await run(2, 8);
    const u = unloaded.map((r) => r.ms);
    const uP50 = quantile(u, 0.5);
    const uP99 = quantile(u, 0.99);
    const rss0Each = svc.rssMbEach(); // MB of each process
    const rss0 = rss0Each.reduce((a, b) => a + b, 0);
    console.log(`unloaded: p50 ${ms(uP50)}, p99 ${ms(uP99)}, RSS ${rss0.toFixed(0)} MB`);

    let capacity = 0;
    /** CPU seconds of one served call, at the highest rate served whole. */
    let cpuPerServed = NaN;
    // --capacity N: C is given (to compare two configurations at the same offered load): one step at it.
    const fixedC = args.capacity ? Number(args.capacity) : undefined;
    for (let rate = fixedC ?? 5; rate <= (fixedC ?? 200); rate += 5) {
      const c0 = svc.cpuSeconds?.();
      const rs = await run(rate, 8);
      const cpu = svc.cpuSeconds?.() - c0;
      const whole = rs.every((r) => r.status === 201);
      const p99 = quantile(
        rs.map((r) => r.ms),
        0.99,
      );
      console.log(
        `  ${rate}/s: ${rs.filter((r) => r.status === 201).length}/${rs.length} served, p99 ${ms(p99)}`,
      );
      if (fixedC === undefined && (!whole || p99 >= 1000)) break;
      capacity = rate;
      cpuPerServed = cpu / rs.length;
    }
    if (capacity === 0) throw new Error('not even 5 calls/s were served whole');
    console.log(`capacity C: ${capacity} calls/s`);

    const offered = 4 * capacity;
    const sampler = sampleRss(svc.rssMbEach, rss0Each);
    if (svc.metricsUrl) await fetch(svc.metricsUrl).catch(() => undefined); // starts the event-loop window
    const split = await startTimeSplit(svc.metricsUrl);
    const probes = startProbes({ port: Number(new URL(svc.url).port), metricsUrl: svc.metricsUrl });
    const t0 = performance.now();
    const cpu0 = {
      service: svc.cpuSeconds?.(),
      generator: process.cpuUsage(),
      machine: machineBusySeconds(),
    };
    const rs = await run(offered, SECONDS, 4);
    const took = (performance.now() - t0) / 1000;
    const seen = probes.stop();
    const where = await split.stop();
    const cores = {
      service: (svc.cpuSeconds?.() - cpu0.service) / took,
      generator: cpuSecondsOf(process.cpuUsage(cpu0.generator)) / took,
      machine: (machineBusySeconds() - cpu0.machine) / took,
    };
    const { peakSum: peakRss, growthEach } = sampler.stop();
    await new Promise((r) => setTimeout(r, 5000));
    const after = (await run(1, 1))[0];

    // What a refusal costs: with every turn held (admitted Expect calls that send no body), each call of a
    // short burst is refused; the service's CPU over the burst, per call.
    const cost = await refusalCosts({
      url: svc.url,
      keys: KEYS,
      bodyBytes: IMAGE.length,
      cpuSeconds: svc.cpuSeconds,
      cpuPerServed,
      burst: (expectEvery) => run(Math.max(4 * capacity, 100), 4, expectEvery),
    });
    const { plain: costPlain, expect: costExpect, held, idleCores } = cost;
    const floorMs = await refusalFloorMs((url) =>
      openLoop({ url, rate: Math.max(4 * capacity, 100), seconds: 4, keys: KEYS, image: IMAGE }),
    );

    const served = rs.filter((r) => r.status === 201);
    const refused = rs.filter((r) => r.status === 503);
    const refusedPlain = refused.filter((r) => !r.expect);
    const refusedExpect = refused.filter((r) => r.expect);
    const expectBodySent = refusedExpect.filter((r) => r.bodySent).length;
    const withRetry = refused.filter((r) => Number(r.retryAfter) >= 1);
    const noAnswer = rs.filter((r) => r.status === 0);
    const other = rs.filter((r) => r.status !== 0 && r.status !== 201 && r.status !== 503);
    const goodput = served.length / SECONDS;
    const servedP99 = quantile(
      served.map((r) => r.ms),
      0.99,
    );
    // A 503 is judged from the request's last byte (the service may answer before it has read the body).
    const refusedP99 = quantile(
      refusedPlain.map((r) => r.afterSentMs),
      0.99,
    );
    // An Expect client's 503 is judged from its head: it sends its body only after a 100.
    const refusedExpectP99 = quantile(
      refusedExpect.map((r) => r.headMs),
      0.99,
    );
    const refusedP99FromStart = quantile(
      refused.map((r) => r.ms),
      0.99,
    );
    let used = 0;
    for (const key of KEYS) {
      // A call's charge is reported just after its answer: read the quota once nothing is held.
      for (let tries = 0; ; tries++) {
        const q = await fetch(`${svc.url}/v1/vision/quota`, { headers: { authorization: `Bearer ${key}` } });
        const images = (await q.json()).images;
        if (images.held === 0 || tries >= 50) {
          used += images.used;
          break;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    const charged = every.filter((r) => r.status === 201).length;
    console.log(
      `offered ${offered}/s for ${SECONDS} s, limit ${LIMIT_SHOWN} (${rs.length} calls, all answered after ${took.toFixed(1)} s):`,
    );
    console.log(`  201: ${served.length} (goodput ${goodput.toFixed(1)}/s), p99 ${ms(servedP99)}`);
    console.log(
      `  503: ${refused.length} (${withRetry.length} with Retry-After), p99 ${ms(refusedP99)} after the last byte (${ms(refusedP99FromStart)} from the first)`,
    );
    console.log(
      `  Expect clients: ${rs.filter((r) => r.expect).length} calls, ${refusedExpect.length} refused, p99 ${ms(refusedExpectP99)} after the head, ${expectBodySent} of them had sent body bytes`,
    );
    // The gateway's own loop where it reports one (the standalone gateway's thread, a distributed gateway); else it
    // shares the process's main loop.
    const ownLoop = seen.gatewayLagP99Ms.length > 0;
    const lag = [...(ownLoop ? seen.gatewayLagP99Ms : seen.mainLagP99Ms)].sort((a, b) => a - b);
    const mainLag = [...seen.mainLagP99Ms].sort((a, b) => a - b);
    console.log(
      `  gateway event-loop delay (${ownLoop ? 'its own loop' : "the process's main loop, which it shares"}; p99 per ${lag.length} windows of 250 ms): median ${ms(quantile(lag, 0.5))}, max ${ms(lag.at(-1) ?? NaN)}; main loop of the metrics process: median ${ms(quantile(mainLag, 0.5))}, max ${ms(mainLag.at(-1) ?? NaN)}`,
    );
    console.log(
      `  where a 503's time goes: the gateway's own time for it (head parsed to answer written), p99 under ${ms(where.gatewayP99Ms)} (bucket bound); the door's refusals by reason: ${where.doorShed || 'none'}; load generator's own loop delay p99 ${ms(where.generatorP99Ms)}, max ${ms(where.generatorMaxMs)}`,
    );
    console.log(
      `  accept queue of the gateway's socket: at most ${seen.acceptMax} waiting (bound: the backlog, 511); requests waiting for an upstream connection: at most ${seen.upstreamQueuedMax}`,
    );
    console.log(
      `  CPU of the service per call: served ${ms(cpuPerServed * 1000)} (at C); with ${held} turns held (the service idle ${idleCores.toFixed(3)} cores), refused ${costPlain.cpuMs.toFixed(2)} ms (${costPlain.refused}/${costPlain.calls} refused), refused with Expect ${costExpect.cpuMs.toFixed(2)} ms (${costExpect.refused}/${costExpect.calls}); refused / served ${(costPlain.cpuMs / (cpuPerServed * 1000)).toFixed(3)}; the floor, a bare node:http server reading the body away and answering 503: ${floorMs.toFixed(2)} ms (refused / floor ${(costPlain.cpuMs / floorMs).toFixed(1)})`,
    );
    console.log(
      `  CPU cores used: service ${cores.service.toFixed(2)}, load generator ${cores.generator.toFixed(2)}, whole machine ${cores.machine.toFixed(2)} (of ${os.cpus().length})`,
    );
    const errors = [...new Set(noAnswer.map((r) => r.error))].join(', ');
    const growthMost = Math.max(...growthEach);
    console.log(
      `  no answer: ${noAnswer.length} (${errors}); other: ${other.length}; peak RSS ${peakRss.toFixed(0)} MB; growth of each process (MB, in the order of --pids) ${growthEach.map((g) => g.toFixed(0)).join(', ')}, all together ${(peakRss - rss0).toFixed(0)}`,
    );
    console.log(
      `  a call 5 s after: ${after.status} in ${ms(after.ms)}; quota used ${used}, 201s ${charged}`,
    );

    const rows = [
      ['goodput / C', goodput / capacity, '>= 0.9', goodput >= 0.9 * capacity],
      [
        'p99 of 201s / (bound + 2 x unloaded p99)',
        servedP99 / (QUEUE_BOUND_MS + 2 * uP99),
        '<= 1',
        servedP99 <= QUEUE_BOUND_MS + 2 * uP99,
      ],
      [
        'other calls answered 503 with Retry-After',
        withRetry.length === rs.length - served.length ? 1 : 0,
        '= 1',
        withRetry.length === rs.length - served.length,
      ],
      ['p99 of 503s after the last byte / 100 ms', refusedP99 / 100, '<= 1', !(refusedP99 > 100)],
      [
        'p99 of Expect 503s after the head / 100 ms',
        refusedExpectP99 / 100,
        '<= 1',
        refusedExpect.length > 0 && !(refusedExpectP99 > 100) && expectBodySent === 0,
      ],
      ['resets and client timeouts', noAnswer.length, '= 0', noAnswer.length === 0],
      ['quota used / 201s of the whole run', used / charged, '= 1', used === charged],
      ['peak - unloaded RSS, most of a process (MB) / 300', growthMost / 300, '<= 1', !(growthMost > 300)],
      [
        'call after the load / 2 x unloaded p99',
        after.ms / (2 * uP99),
        '<= 1',
        after.status === 201 && after.ms <= 2 * uP99,
      ],
    ];
    report(rows.map(([name, value, limit, ok]) => ({ name, value: Number(value).toFixed(2), limit, ok })));
  } finally {
    svc.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
