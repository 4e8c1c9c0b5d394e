'use strict';
/**
 * What the overload bench watches while it loads the service, beside its own calls:
 * - the kernel's accept queue of the gateway's listening socket (/proc/net/tcp: for a LISTEN socket,
 *   rx_queue is the connections waiting to be accepted; its bound is the listen backlog, 511);
 * - the gateway's metrics: event-loop delay (prom-client's p99 over each scrape interval) and the
 *   requests waiting for an upstream connection (vision_gateway_upstream_queued);
 * - CPU time of a set of processes (/proc/PID/stat).
 */
const { randomUUID } = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');

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

/** The value of the first sample of `name` in a Prometheus text page (the largest when several). */
function sampleOf(text, name) {
  let best;
  for (const line of text.split('\n')) {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`).exec(line);
    if (m) best = Math.max(best ?? -Infinity, Number(m[1]));
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
  const seen = { acceptMax: 0, lagP99Ms: [], upstreamQueuedMax: 0, scrapes: 0 };
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
      const lag = sampleOf(text, 'vision_process_nodejs_eventloop_lag_p99_seconds');
      if (lag !== undefined) seen.lagP99Ms.push(lag * 1000);
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

module.exports = { acceptQueue, startProbes, holdTurns, cpuSecondsOf, rssMbOf };
