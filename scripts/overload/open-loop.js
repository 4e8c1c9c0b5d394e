/**
 * An open-loop load generator for the image endpoint: it sends at a fixed rate whatever the answers
 * (a closed loop would slow down with the service and hide its queueing). Used by
 * bench/overload.bench.js and test/e2e/overload.test.ts.
 *
 *   const { openLoop } = require('./scripts/overload/open-loop');
 *   const results = await openLoop({ url, rate: 40, seconds: 10, keys: ['k1', 'k2'], image });
 *
 * Each request carries one image and a fresh Idempotency-Key, round-robin over `keys` (one subject per
 * key). Each result: { key, idem, status (0: no HTTP answer), ms (to the end of the answer), afterSentMs (from
 * the request's last byte, handed to the kernel, to the end of the answer; 0 when the answer ended first),
 * retryAfter, reason, error (the network error's code for status 0) }.
 */
const http = require('node:http');
const { randomUUID } = require('node:crypto');

/** A multipart body with one image, encoded once. */

/** Reads an answer to its end: its status, Retry-After and error reason go to `done`; then `after`, if given. */
function readAnswer(res, done, after) {
  const chunks = [];
  res.on('data', (c) => chunks.push(c));
  res.on('error', (err) => done({ status: 0, error: err.code ?? err.message }));
  res.on('end', () => {
    let reason;
    try {
      reason = JSON.parse(Buffer.concat(chunks).toString()).error?.details?.reason;
    } catch {
      reason = undefined;
    }
    done({ status: res.statusCode, retryAfter: res.headers['retry-after'], reason });
    after?.();
  });
}
function imageBody(image, scene = 'person_vehicle') {
  const boundary = 'open-loop-6f1c';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="scene_code"\r\n\r\n${scene}\r\n`),
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
    ),
    image,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** One POST of the image endpoint; resolves with its result (never rejects). */
function send(agent, url, key, idem, { body, contentType }, timeoutMs) {
  const target = new URL('/v1/vision/image-detections', url);
  const t0 = performance.now();
  let sentAt;
  return new Promise((resolve) => {
    const done = (r) => {
      const end = performance.now();
      resolve({ key, idem, ms: end - t0, afterSentMs: Math.max(0, end - (sentAt ?? t0)), ...r });
    };
    const req = http.request(
      target,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${key}`,
          'idempotency-key': idem,
          'content-type': contentType,
          'content-length': body.length,
        },
        timeout: timeoutMs,
      },
      (res) => readAnswer(res, done),
    );
    req.on('timeout', () =>
      req.destroy(Object.assign(new Error('client timeout'), { code: 'CLIENT_TIMEOUT' })),
    );
    req.on('error', (err) => done({ status: 0, error: err.code ?? err.message }));
    req.on('finish', () => (sentAt = performance.now()));
    req.end(body);
  });
}

/**
 * One POST of the image endpoint with `Expect: 100-continue`, as curl sends a large upload: the body
 * leaves only after `100 Continue`. A final answer before it is read and the connection closed without
 * the body (a refused call sent no byte of it). The result adds { expect: true, bodySent, headMs: from the
 * head handed to the kernel to the first answer, 100 or final }.
 */
function sendExpect(agent, url, key, idem, { body, contentType }, timeoutMs) {
  const target = new URL('/v1/vision/image-detections', url);
  const t0 = performance.now();
  let headAt = t0;
  let answeredAt;
  let sentAt;
  let bodySent = false;
  let settled = false;
  return new Promise((resolve) => {
    const done = (r) => {
      if (settled) return;
      settled = true;
      const end = performance.now();
      const afterSentMs = Math.max(0, end - (bodySent ? (sentAt ?? end) : headAt));
      resolve({
        key,
        idem,
        expect: true,
        bodySent,
        ms: end - t0,
        afterSentMs,
        headMs: (answeredAt ?? end) - headAt,
        ...r,
      });
    };
    const req = http.request(target, {
      method: 'POST',
      agent,
      headers: {
        authorization: `Bearer ${key}`,
        'idempotency-key': idem,
        'content-type': contentType,
        'content-length': body.length,
        expect: '100-continue',
      },
      timeout: timeoutMs,
    });
    req.once('continue', () => {
      answeredAt ??= performance.now();
      bodySent = true;
      req.end(body);
    });
    req.once('response', (res) => {
      answeredAt ??= performance.now();
      readAnswer(res, done, () => {
        if (!bodySent) req.destroy();
      });
    });
    req.on('timeout', () =>
      req.destroy(Object.assign(new Error('client timeout'), { code: 'CLIENT_TIMEOUT' })),
    );
    req.on('error', (err) => done({ status: 0, error: err.code ?? err.message }));
    req.on('finish', () => (sentAt = performance.now()));
    req.flushHeaders();
    headAt = performance.now();
  });
}

/**
 * Sends `rate` requests a second for `seconds`, round-robin over `keys`; resolves with every result once
 * all are answered (or failed). `timeoutMs` is the client's own timeout (default 30 s). With
 * `expectEvery: n`, every n-th call is sent with `Expect: 100-continue` (sendExpect).
 */
async function openLoop({ url, rate, seconds, keys, image, timeoutMs = 30_000, expectEvery = 0 }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const encoded = imageBody(image);
  const total = Math.round(rate * seconds);
  const t0 = performance.now();
  const pending = [];
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const how = expectEvery > 0 && i % expectEvery === expectEvery - 1 ? sendExpect : send;
    pending.push(how(agent, url, keys[i % keys.length], randomUUID(), encoded, timeoutMs));
  }
  const results = await Promise.all(pending);
  agent.destroy();
  return results;
}

/** p-quantile (nearest rank) of a list of numbers; NaN when empty. */
function quantile(xs, p) {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
}

module.exports = { openLoop, send, sendExpect, imageBody, quantile };
