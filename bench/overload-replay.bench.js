/**
 * Overload by analytics replays: what another subject sees while one subject runs many replays with the costliest
 * rule set the API accepts. Run after `npm run build`:
 *
 *   node bench/overload-replay.bench.js [--replays 16] [--seconds 30] [--clip pedestrians_vtest_opencv.mp4]
 *                                       [--gateway-url URL --keys HEAVY,OTHER --metrics-urls URL,...]
 *
 * Starts `npm start`'s entry point as a child process with two keys, the heavy subject's rate and concurrency
 * limits raised (HEAVY_LIMITS below) so that its replays reach the replay queues and not only its own limits,
 * or uses the given gateway (started with the same GATEWAY_LIMIT_OVERRIDES), its two keys and every service's
 * metrics address; then:
 * 1. the heavy subject creates a file task of --clip (80 s of a crowd: about 400 frames of 5 to 20 people) and
 *    waits for it to succeed;
 * 2. unloaded, for 8 s, the other subject reads `GET /v1/vision/quota` every 100 ms and detects one image
 *    (a 155 KB JPEG) every 200 ms after the last answer, within its own rate limit: the p99 of each;
 * 3. loaded, for --seconds: --replays replays of the heaviest rules (test/helpers/heaviest-rules.js) at once,
 *    each paging to its end (each page bounded by max_frames and its work budget) and starting again, a
 *    refusal waiting its Retry-After; meanwhile the other subject does as in 2, and the inference breaker's
 *    state is read from the metrics every second.
 * Targets: the other subject's quota p99 under the replays <= 100 ms; its detections' p99 under the replays <=
 * 2 x their unloaded p99 (measured in this run); every detection of the other subject served (201); the breaker
 * never open; no replay answered 401; every replay loop reached the end of the task at least once. Ends with
 * `targets: N met, M missed`.
 */
const fs = require('node:fs');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { parseArgs } = require('./lib/args');
const { startStandaloneChild } = require('./lib/standalone-child');
const { quantile } = require('../scripts/overload/open-loop');
const { report } = require('./lib/targets');
const { heaviestRules } = require('../test/helpers/heaviest-rules');

const root = path.resolve(__dirname, '..');
const args = parseArgs(process.argv.slice(2));
const REPLAYS = Number(args.replays ?? 16);
const SECONDS = Number(args.seconds ?? 30);
const SHARED_DIR = process.env.VISION_SHARED_DIR ?? path.resolve(root, '../shared');
const IMAGE = fs.readFileSync(path.join(SHARED_DIR, 'media/images/street_people_car_coco9891.jpg'));
const CLIP_NAME = args.clip ?? 'pedestrians_vtest_opencv.mp4';
const CLIP = fs.readFileSync(path.join(SHARED_DIR, 'media/videos', CLIP_NAME));
const [HEAVY, OTHER] = args.keys
  ? args.keys.split(',')
  : ['bench-replay-heavy-0123456789', 'bench-replay-other-0123456789'];
const RULES = heaviestRules(['car', 'person', 'truck', 'bicycle']);
const QUOTA_BOUND_MS = 100;
/** The heavy subject's limits (GATEWAY_LIMIT_OVERRIDES): its replays are limited by the replay queues alone. */
const HEAVY_LIMITS = { 'replay-heavy': { qps: 1000, burst: 1000, concurrency: 64 } };

const ms = (x) => `${x.toFixed(0)} ms`;
/** `3 x 200, 1 x 503`: how many answers of each status. */
const histogram = (statuses) => {
  const n = new Map();
  for (const s of statuses) n.set(s, (n.get(s) ?? 0) + 1);
  return [...n].map(([s, c]) => `${c} x ${s}`).join(', ');
};
const sleep = (t) => new Promise((r) => setTimeout(r, t));

async function call(base, key, method, p, body, headers = {}) {
  const t0 = performance.now();
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...headers },
    body,
  });
  const text = await res.text();
  return {
    status: res.status,
    ms: performance.now() - t0,
    retryAfter: Number(res.headers.get('retry-after') ?? 0),
    body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined,
  };
}

/** The heavy subject's file task, once it has succeeded: its id. */
async function finishedTask(base) {
  const form = new FormData();
  form.append('scene_code', 'person_vehicle');
  form.append('file', new Blob([CLIP]), 'lot.mp4');
  const created = await call(base, HEAVY, 'POST', '/v1/vision/video-tasks', form, {
    'idempotency-key': randomUUID(),
  });
  if (created.status !== 201) throw new Error(`task creation answered ${created.status}`);
  const id = created.body.task_id;
  for (const deadline = Date.now() + 300_000; Date.now() < deadline; await sleep(1000)) {
    const t = await call(base, HEAVY, 'GET', `/v1/vision/tasks/${id}`);
    if (t.body?.status === 'succeeded') return id;
    if (['failed', 'stopped', 'refunded'].includes(t.body?.status)) throw new Error(`task ${t.body.status}`);
  }
  throw new Error('the task did not end in 5 minutes');
}

/** The other subject for `seconds`: quota reads every 50 ms, and image detections one after another. */
async function otherSubject(base, seconds) {
  const until = Date.now() + seconds * 1000;
  const quota = [];
  const quotaStatuses = [];
  const detections = [];
  const detectionStatuses = [];
  const reads = (async () => {
    while (Date.now() < until) {
      const r = await call(base, OTHER, 'GET', '/v1/vision/quota');
      quota.push(r.ms);
      quotaStatuses.push(r.status);
      await sleep(100);
    }
  })();
  const detects = (async () => {
    while (Date.now() < until) {
      const form = new FormData();
      form.append('files', new Blob([IMAGE]), 'street.jpg');
      const r = await call(base, OTHER, 'POST', '/v1/vision/image-detections', form, {
        'idempotency-key': randomUUID(),
      });
      detections.push(r.ms);
      detectionStatuses.push(r.status);
      await sleep(200);
    }
  })();
  await Promise.all([reads, detects]);
  return { quota, quotaStatuses, detections, detectionStatuses };
}

/** One replay loop for `seconds`: pages to the task's end, then again; a refusal waits its Retry-After. */
async function replayLoop(base, taskId, seconds, tally) {
  const until = Date.now() + seconds * 1000;
  let cursor;
  while (Date.now() < until) {
    const body = JSON.stringify({ ...RULES, max_events: 100, ...(cursor ? { cursor } : {}) });
    const r = await call(base, HEAVY, 'POST', `/v1/vision/tasks/${taskId}/analytics/replay`, body, {
      'content-type': 'application/json',
    });
    tally.statuses.set(r.status, (tally.statuses.get(r.status) ?? 0) + 1);
    if (r.status === 200) {
      tally.pages.push(r.ms);
      tally.frames += r.body.frames;
      cursor = r.body.next_cursor || undefined;
      if (!cursor) tally.whole += 1;
    } else await sleep(Math.min(Math.max(r.retryAfter, 1), 2) * 1000);
  }
}

/** Samples every metrics address each second: how many samples saw an inference breaker open. */
function watchBreaker(urls) {
  let samples = 0;
  let open = 0;
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const texts = await Promise.all(
        urls.map((u) =>
          fetch(u).then(
            (r) => r.text(),
            () => '',
          ),
        ),
      );
      samples++;
      if (texts.some((t) => /^vision_breaker_state\{[^}]*state="open"[^}]*\} 1$/m.test(t))) open++;
      await sleep(1000);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
      return { samples, open };
    },
  };
}

async function main() {
  const svc = args['gateway-url']
    ? {
        url: args['gateway-url'],
        metricsUrls: (args['metrics-urls'] ?? '').split(',').filter(Boolean),
        stop() {},
      }
    : await startStandaloneChild({
        VISION_MODELS_DIR: process.env.VISION_MODELS_DIR ?? path.join(SHARED_DIR, 'models'),
        VISION_API_KEYS: `${HEAVY}:replay-heavy,${OTHER}:replay-other`,
        QUOTA_IMAGE_DAILY: '1000000',
        QUOTA_VIDEO_DAILY: '1000',
        GATEWAY_LIMIT_OVERRIDES: JSON.stringify(HEAVY_LIMITS),
      }).then((c) => ({ ...c, metricsUrls: [c.metricsUrl] }));
  try {
    console.log(
      `overload-replay: ${REPLAYS} replays of the heaviest rules (${Buffer.byteLength(JSON.stringify(RULES))} ` +
        `bytes) for ${SECONDS} s against ${args['gateway-url'] ? svc.url : 'a standalone process'}`,
    );
    const taskId = await finishedTask(svc.url);
    console.log(`task ${taskId} succeeded`);

    const idle = await otherSubject(svc.url, 8);
    const idleQuotaP99 = quantile(idle.quota, 0.99);
    const idleDetectP99 = quantile(idle.detections, 0.99);
    console.log(
      `unloaded, other subject: quota p50 ${ms(quantile(idle.quota, 0.5))} p99 ${ms(idleQuotaP99)}; ` +
        `detections ${histogram(idle.detectionStatuses)}, p99 ${ms(idleDetectP99)}`,
    );

    const tallies = Array.from({ length: REPLAYS }, () => ({
      statuses: new Map(),
      pages: [],
      frames: 0,
      whole: 0,
    }));
    const breaker = watchBreaker(svc.metricsUrls);
    const [loaded] = await Promise.all([
      otherSubject(svc.url, SECONDS),
      ...tallies.map((t) => replayLoop(svc.url, taskId, SECONDS, t)),
    ]);
    const seen = await breaker.stop();

    const statuses = new Map();
    for (const t of tallies) for (const [s, n] of t.statuses) statuses.set(s, (statuses.get(s) ?? 0) + n);
    const pages = tallies.flatMap((t) => t.pages);
    const frames = tallies.reduce((n, t) => n + t.frames, 0);
    const quotaP99 = quantile(loaded.quota, 0.99);
    const detectP99 = quantile(loaded.detections, 0.99);
    const served = loaded.detectionStatuses.filter((s) => s === 201).length;
    console.log(
      `replays: ${[...statuses].map(([s, n]) => `${n} x ${s}`).join(', ')}; ${pages.length} pages, ${frames} ` +
        `frames (${(frames / SECONDS).toFixed(0)}/s), page p50 ${ms(quantile(pages, 0.5))} p99 ` +
        `${ms(quantile(pages, 0.99))}; whole replays ${tallies.map((t) => t.whole).join('/')}`,
    );
    console.log(
      `under the replays, other subject: quota p50 ${ms(quantile(loaded.quota, 0.5))} p99 ${ms(quotaP99)} ` +
        `(${(quotaP99 / idleQuotaP99).toFixed(2)} x unloaded), ${histogram(loaded.quotaStatuses)}; detections ` +
        `${histogram(loaded.detectionStatuses)}, p99 ${ms(detectP99)}`,
    );
    console.log(`inference breaker: open in ${seen.open} of ${seen.samples} samples (once a second)`);

    const { missed } = report([
      {
        name: "other subject's quota p99 under the replays / 100 ms",
        value: (quotaP99 / QUOTA_BOUND_MS).toFixed(2),
        limit: '<= 1',
        ok: quotaP99 <= QUOTA_BOUND_MS,
      },
      {
        name: "other subject's detection p99 under the replays / 2 x unloaded p99",
        value: (detectP99 / (2 * idleDetectP99)).toFixed(2),
        limit: '<= 1',
        ok: detectP99 <= 2 * idleDetectP99,
      },
      {
        name: "other subject's detections served",
        value: `${served}/${loaded.detections.length}`,
        limit: 'all',
        ok: served === loaded.detections.length && served > 0,
      },
      { name: 'samples with the inference breaker open', value: seen.open, limit: '0', ok: seen.open === 0 },
      {
        name: 'replay answers 401',
        value: statuses.get(401) ?? 0,
        limit: '0',
        ok: !statuses.has(401),
      },
      {
        name: 'replay loops that reached the end of the task',
        value: `${tallies.filter((t) => t.whole > 0).length}/${REPLAYS}`,
        limit: 'all',
        ok: tallies.every((t) => t.whole > 0),
      },
    ]);
    process.exitCode = missed === 0 ? 0 : 1;
  } finally {
    svc.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
