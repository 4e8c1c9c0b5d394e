'use strict';
/**
 * What the overload bench watches while it loads the service, beside its own calls:
 * - the kernel's accept queue of the gateway's listening socket (/proc/net/tcp: for a LISTEN socket,
 *   rx_queue is the connections waiting to be accepted; its bound is the listen backlog, 511);
 * - the gateway's metrics: its own event loop's delay (vision_gateway_event_loop_delay_seconds, p99 since the
 *   previous scrape), the process's main loop's (prom-client's p99, less its 10 ms sampling interval: the same
 *   loop as the gateway's where the gateway has no thread of its own) and the requests waiting for an
 *   upstream connection (vision_gateway_upstream_queued);
 * - CPU time of a set of processes (/proc/PID/stat).
 */
const { randomUUID } = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const { monitorEventLoopDelay } = require('node:perf_hooks');

/** The accept queue of the socket listening on `port` now: { queued }, or undefined. */
function acceptQueue(port) {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 5 || f[3] !== '0A' || !f[1].endsWith(`:${hex}`)) continue;
      const rx = parseInt(f[4].split(':')[1], 16);
      return { queued: rx };
    }
  }
  return undefined;
}

/** The value of the samples of `name` (whose line includes `has`) in a Prometheus text page (the largest when several). */
function sampleOf(text, name, has = '') {
  let best;
  const sample = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = sample.exec(line);
    if (m && line.includes(has)) best = Math.max(best ?? -Infinity, Number(m[1]));
  }
  return best;
}

/** Sum of a metric's samples whose line includes `has`. */
function sumOf(text, name, has = '') {
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(`${name}{`) && line.includes(has)) sum += Number(line.split(' ').pop());
  return sum;
}

/**
 * Samples every `everyMs` until stop(): the gateway's accept queue (when `port` is given) and its
 * metrics (when `metricsUrl` is). stop() answers the figures seen.
 */
function startProbes({ port, metricsUrl, everyMs = 250 }) {
  const seen = { acceptMax: 0, gatewayLagP99Ms: [], mainLagP99Ms: [], upstreamQueuedMax: 0, scrapes: 0 };
  let busy = false;
  const tick = async () => {
    if (port) {
      const q = acceptQueue(port);
      if (q) seen.acceptMax = Math.max(seen.acceptMax, q.queued);
    }
    if (!metricsUrl || busy) return;
    busy = true;
    try {
      const text = await (await fetch(metricsUrl)).text();
      seen.scrapes++;
      const gateway = sampleOf(text, 'vision_gateway_event_loop_delay_seconds', 'quantile="0.99"');
      if (gateway !== undefined) seen.gatewayLagP99Ms.push(gateway * 1000);
      const main = sampleOf(text, 'vision_process_nodejs_eventloop_lag_p99_seconds');
      if (main !== undefined) seen.mainLagP99Ms.push(Math.max(0, main * 1000 - 10));
      seen.upstreamQueuedMax = Math.max(
        seen.upstreamQueuedMax,
        sumOf(text, 'vision_gateway_upstream_queued'),
      );
    } catch {
      // a scrape that failed under load is skipped
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), everyMs);
  return {
    stop() {
      clearInterval(timer);
      return seen;
    },
  };
}

/** CPU time (user + system, seconds) the processes `pids` used so far. */
function cpuSecondsOf(pids) {
  let sum = 0;
  for (const pid of pids) {
    try {
      const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      sum += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // a process that is gone adds nothing
    }
  }
  return sum;
}

/** Resident memory (MB) of the processes `pids` together. */
/**
 * Opens admitted calls that hold their turn: `Expect: 100-continue`, then no body (the gateway and the
 * service wait for it, up to the upload idle time). Stops at `max`, or at the first call answered at once
 * (no room left). Answers the held requests (destroy() gives their turns back).
 */
async function holdTurns(url, keys, max, bodyBytes) {
  const held = [];
  for (let i = 0; i < max; i++) {
    const req = http.request(new URL('/v1/vision/image-detections', url), {
      method: 'POST',
      agent: false,
      headers: {
        authorization: `Bearer ${keys[i % keys.length]}`,
        'idempotency-key': randomUUID(),
        'content-type': 'multipart/form-data; boundary=hold',
        'content-length': bodyBytes + 200,
        expect: '100-continue',
      },
    });
    req.on('error', () => undefined);
    const answer = await new Promise((resolve) => {
      req.once('continue', () => resolve('continue'));
      req.once('response', (res) => {
        res.resume();
        resolve('final');
      });
      req.flushHeaders();
    });
    if (answer !== 'continue') {
      req.destroy();
      break;
    }
    held.push(req);
  }
  return held;
}

/**
 * What a refused call costs the service: with every turn held, each call of `burst(expectEvery)` (plain,
 * then `Expect: 100-continue`) is refused at the door. The service's own CPU while nothing is sent (timers,
 * metrics) and that of the calls a burst still gets served, at `cpuPerServed` seconds each, are taken out.
 * The turns are taken afresh for each burst: a held call's backend cuts it after its upload idle time.
 */
async function refusalCosts({ url, keys, bodyBytes, cpuSeconds, cpuPerServed, burst }) {
  const i0 = cpuSeconds?.();
  const it0 = performance.now();
  await new Promise((r) => setTimeout(r, 3000));
  const idleCores = (cpuSeconds?.() - i0) / ((performance.now() - it0) / 1000);
  let held = 0;
  const one = async (expectEvery) => {
    const holders = await holdTurns(url, keys, 24, bodyBytes);
    held = holders.length;
    const c0 = cpuSeconds?.();
    const b0 = performance.now();
    const rs = await burst(expectEvery);
    const cpu = cpuSeconds?.() - c0 - (idleCores * (performance.now() - b0)) / 1000;
    for (const h of holders) h.destroy();
    const no = rs.filter((r) => r.status === 503).length;
    const ok = rs.filter((r) => r.status === 201).length;
    return { cpuMs: ((cpu - ok * cpuPerServed) / no) * 1000, refused: no, calls: rs.length };
  };
  const plain = await one(0);
  return { plain, expect: await one(1), held, idleCores };
}

/** The cumulative buckets (`le` -> count) of a histogram's series whose line includes `has`, summed. */
function bucketsOf(text, name, has) {
  const buckets = new Map();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}_bucket{`) || !line.includes(has)) continue;
    const le = /le="([^"]+)"/.exec(line)[1];
    buckets.set(le, (buckets.get(le) ?? 0) + Number(line.split(' ').pop()));
  }
  return buckets;
}

/**
 * The bucket bound (ms) under which 99 % of the observations made between two scrapes fall: `before` and
 * `after` from bucketsOf. NaN with no observation.
 */
function p99BetweenMs(before, after) {
  const les = [...after.keys()].sort((a, b) => Number(a) - Number(b));
  const total = (after.get('+Inf') ?? 0) - (before.get('+Inf') ?? 0);
  if (total <= 0) return NaN;
  for (const le of les)
    if ((after.get(le) ?? 0) - (before.get(le) ?? 0) >= 0.99 * total) return Number(le) * 1000;
  return Infinity;
}

/**
 * Where a 503's time goes, from now until stop(): the gateway's own time for its refused image calls (its
 * request-duration histogram: from the head parsed to the answer written; p99 as a bucket bound), against the
 * time the client saw, and this process's (the load generator's) own event-loop delay.
 */
async function startTimeSplit(metricsUrl) {
  const refusals = async () =>
    metricsUrl
      ? bucketsOf(
          await (await fetch(metricsUrl)).text(),
          'vision_http_server_request_duration_seconds',
          'service="gateway",method="POST",route="/v1/vision/image-detections",status_code="503"',
        )
      : new Map();
  const shed = async () => {
    if (!metricsUrl) return new Map();
    const text = await (await fetch(metricsUrl)).text();
    const byReason = new Map();
    for (const line of text.split('\n')) {
      if (!line.startsWith('vision_admission_shed_total{') || !line.includes('queue="gateway_image_calls"'))
        continue;
      const reason = /reason="([^"]+)"/.exec(line)[1];
      byReason.set(reason, (byReason.get(reason) ?? 0) + Number(line.split(' ').pop()));
    }
    return byReason;
  };
  const before = await refusals();
  const shedBefore = await shed();
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  return {
    async stop() {
      loop.disable();
      const shedAfter = await shed();
      return {
        // The door's refusals by reason: `overloaded` at once on the head; the others after the call waited its turn.
        doorShed: [...shedAfter]
          .map(([reason, n]) => `${reason} ${n - (shedBefore.get(reason) ?? 0)}`)
          .join(', '),
        gatewayP99Ms: p99BetweenMs(before, await refusals()),
        generatorP99Ms: Math.max(0, loop.percentile(99) / 1e6 - 10),
        generatorMaxMs: Math.max(0, loop.max / 1e6 - 10),
      };
    },
  };
}

/** CPU time the whole machine spent busy so far (all cores, /proc/stat, 100 ticks a second), in seconds. */
function machineBusySeconds() {
  const [, ...ticks] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq, steal] = ticks.map(Number);
  return (user + nice + system + irq + softirq + steal) / 100;
}

/** A process.cpuUsage() difference in seconds. */
function usageSeconds(usage) {
  return (usage.user + usage.system) / 1e6;
}

module.exports = {
  acceptQueue,
  startProbes,
  startTimeSplit,
  refusalCosts,
  cpuSecondsOf,
  machineBusySeconds,
  usageSeconds,
};
