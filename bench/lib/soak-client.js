'use strict';
/* global fetch, FormData, Blob */
/**
 * The soak's HTTP client (bench/soak.js): every call through the gateway is tallied by route, status and
 * error code; a 5xx that is not one of SPEC.md section 7's 503 codes, or a connection the gateway
 * dropped, is kept as a violation with its details.
 */
const DOCUMENTED_503 = new Set(['OP-TASK-UPSTREAM-DOWN', 'OP-TASK-BREAKER-OPEN', 'OP-SYS-UNAVAILABLE']);

class SoakClient {
  constructor(baseUrl) {
    this.base = baseUrl;
    /** `route status code` -> count */
    this.tally = new Map();
    this.violations = [];
    this.requests = 0;
  }

  count(label) {
    this.tally.set(label, (this.tally.get(label) ?? 0) + 1);
  }

  /** One call; `route` names it in the tally (e.g. 'POST /video-tasks'). Never throws. */
  async call(route, method, path, { key, headers = {}, body } = {}) {
    this.requests++;
    let res;
    let text;
    try {
      res = await fetch(`${this.base}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...headers },
        body,
        signal: AbortSignal.timeout(120_000),
      });
      text = await res.text();
    } catch (err) {
      this.count(`${route} transport-error`);
      this.violations.push({
        route,
        problem: `transport: ${err && err.message}`,
        at: new Date().toISOString(),
      });
      return { status: 0, body: undefined, headers: new Headers() };
    }
    let json;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    const code = json && json.error ? json.error.code : '';
    this.count(`${route} ${res.status}${code ? ` ${code}` : ''}`);
    if (res.status >= 500 && !(res.status === 503 && DOCUMENTED_503.has(code)))
      this.violations.push({
        route,
        problem: `${res.status} ${code || text.slice(0, 120)}`,
        at: new Date().toISOString(),
      });
    return { status: res.status, body: json, headers: res.headers };
  }

  createLive(key, idem, streamUrl) {
    return this.call('POST /tasks', 'POST', '/v1/vision/tasks', {
      key,
      headers: { 'content-type': 'application/json', 'idempotency-key': idem },
      body: JSON.stringify({ scene_code: 'person_vehicle', stream_url: streamUrl }),
    });
  }

  createFile(key, idem, bytes, name) {
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append('file', new Blob([bytes]), name);
    return this.call('POST /video-tasks', 'POST', '/v1/vision/video-tasks', {
      key,
      headers: { 'idempotency-key': idem },
      body: form,
    });
  }

  detectImages(key, idem, images) {
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    for (const img of images) form.append('files', new Blob([img.bytes]), img.name);
    return this.call('POST /image-detections', 'POST', '/v1/vision/image-detections', {
      key,
      headers: { 'idempotency-key': idem },
      body: form,
    });
  }

  getTask(key, id) {
    return this.call('GET /tasks/{id}', 'GET', `/v1/vision/tasks/${id}`, { key });
  }

  stop(key, id) {
    return this.call('POST /tasks/{id}/stop', 'POST', `/v1/vision/tasks/${id}/stop`, { key });
  }

  results(key, id, cursor) {
    const q = new URLSearchParams({ limit: '200', min_score: '0', ...(cursor ? { cursor } : {}) });
    return this.call('GET /tasks/{id}/results', 'GET', `/v1/vision/tasks/${id}/results?${q}`, { key });
  }

  quota(key) {
    return this.call('GET /quota', 'GET', '/v1/vision/quota', { key });
  }
}

module.exports = { SoakClient, DOCUMENTED_503 };
