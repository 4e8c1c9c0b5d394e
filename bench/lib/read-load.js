'use strict';
/* global performance, URLSearchParams */
/** Concurrent page readers of GET /v1/vision/tasks/{id}/results and their latency summary (bench/results.bench.js). */
const http = require('node:http');

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * The readers' HTTP client: node's http with one keep-alive connection per reader. (undici's fetch
 * pool hands freed connections to whichever request comes next, which starved some readers for the
 * whole run and made the percentiles measure the client's scheduling, not the service.)
 */
const readerAgent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
function getJson(url, headers) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: readerAgent, headers }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
          } catch (err) {
            reject(err);
          }
        });
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/**
 * Runs `requests` pages of `page` frames with `readers` concurrent clients; each reader pages through a task and
 * starts over.
 */
async function measureReads({ label, baseUrl, headers, taskIds, readers, requests, page }) {
  // Unmeasured warm-up pages: 2 per reader, in the same loop, with no pause before the measured ones.
  const warmup = readers * 2;
  const latencies = [];
  let issued = 0;
  let errors = 0;
  let start = 0;
  async function reader(i) {
    const taskId = taskIds[i % taskIds.length];
    let cursor = '';
    while (issued < warmup + requests) {
      const measured = issued >= warmup;
      if (issued === warmup) start = performance.now();
      issued++;
      const qs = new URLSearchParams({ limit: String(page) });
      if (cursor) qs.set('cursor', cursor);
      const t0 = performance.now();
      const url = `${baseUrl}/v1/vision/tasks/${encodeURIComponent(taskId)}/results?${qs}`;
      const { status, body } = await getJson(url, headers(i, url));
      if (measured) latencies.push(performance.now() - t0);
      if (status !== 200) {
        errors++;
        cursor = '';
        continue;
      }
      cursor = body.next_cursor;
    }
  }
  // Warm-up: every reader opens its connection with one page, then the readers run the warm-up pages
  // and go straight on with the measured ones, so that every connection on the path (the client's, and
  // the gateway's pooled ones to the results service, which grow with the load) exists and the readers
  // are out of step before timing starts. Client and server share this process, and a busy Node
  // server accepts new connections slowly: without this the figures would measure connection set-up
  // and the start-line burst rather than page reads.
  await Promise.all(
    Array.from({ length: readers }, async (_, i) => {
      const taskId = taskIds[i % taskIds.length];
      const url = `${baseUrl}/v1/vision/tasks/${encodeURIComponent(taskId)}/results?limit=1`;
      await getJson(url, headers(i, url));
    }),
  );
  await Promise.all(Array.from({ length: readers }, (_, i) => reader(i)));
  const wallMs = performance.now() - start;
  return summarise(label, latencies, errors, wallMs);
}

function summarise(label, latencies, errors, wallMs) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const out = {
    label,
    requests: sorted.length,
    errors,
    mean_ms: sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length),
    p50_ms: percentile(sorted, 50),
    p99_ms: percentile(sorted, 99),
    pages_per_s: sorted.length / (wallMs / 1000),
  };
  // Kept for pooling rounds, left out of the printed JSON.
  Object.defineProperties(out, {
    latencies: { value: latencies, enumerable: false },
    wallMs: { value: wallMs, enumerable: false },
  });
  return out;
}

/**
 * Measures two paths in alternating rounds (A B B A A B B A ...), each round `requests / rounds` pages,
 * and pools each path's latencies: a machine that gets slower or faster during the run affects both
 * paths alike instead of whichever was measured second.
 */
async function measureAlternating(a, b, rounds) {
  const runs = { [a.label]: [], [b.label]: [] };
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? [a, b] : [b, a];
    for (const o of order)
      runs[o.label].push(await measureReads({ ...o, requests: Math.ceil(o.requests / rounds) }));
  }
  const pool = (label) =>
    summarise(
      label,
      runs[label].flatMap((x) => x.latencies),
      runs[label].reduce((n, x) => n + x.errors, 0),
      runs[label].reduce((n, x) => n + x.wallMs, 0),
    );
  return [pool(a.label), pool(b.label)];
}

module.exports = { percentile, measureReads, summarise, measureAlternating };
