#!/usr/bin/env node
'use strict';
/**
 * Soak: mixed traffic from five subjects at their limits against the distributed deployment
 * (six service processes on the real Postgres, Kafka, Redis and MinIO of scripts/stack), with a Kafka
 * broker restart in the middle. Loopback only. Checks at the end:
 *   - no 5xx other than SPEC.md section 7's 503 codes, no dropped connection;
 *   - no frame lost or duplicated: every task's frame ids are unique and its seqs contiguous from 0;
 *     every upload that succeeded has exactly the frames of the same clip's first run;
 *   - no double charge: each subject's quota `used` equals its tasks not refunded (video) and the
 *     images that succeeded (images); replays of an Idempotency-Key answer the original;
 *   - RSS of every service flat after warm-up: mean of the last fifth / mean of the samples between
 *     30 % and 50 % of the run, each service against --rss-limit (1.3).
 * Prints its figures, one `target ...` line each, and ends with `targets: N met, M missed` (exit 1 when one is
 * missed).
 *
 * Run (it takes the shared servers for its whole length; ~10 min + 2 min set-up and drain):
 *   bash scripts/soak.sh                 # the 10-minute soak
 *   bash scripts/soak.sh --minutes 2     # the short variant
 * Options: --minutes (10), --kafka-down-s (10), --rss-limit (1.3), --sample-fps (2).
 */
const { readFileSync, readdirSync } = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('./lib/args');
const { Deployment, stackScript, SERVICES } = require('../scripts/distributed/launcher.js');
const { SoakClient } = require('./lib/soak-client');
const { startLiveServer } = require('./lib/soak-live');
const { checkFrames, checkQuota, rssSampler } = require('./lib/soak-checks');
const t = require('./lib/soak-traffic');
const { report } = require('./lib/targets');

const args = parseArgs(process.argv.slice(2));
const minutes = Number(args.minutes ?? 10);
const kafkaDownMs = Number(args['kafka-down-s'] ?? 10) * 1000;
const rssLimit = Number(args['rss-limit'] ?? 1.3);
const SHARED = process.env.VISION_SHARED_DIR ?? path.resolve(__dirname, '../../shared');
const CLIP = path.join(SHARED, 'media/videos/pedestrians_vtest_opencv_10s.mov');
const IMAGES_DIR = path.join(SHARED, 'media/images');
const SUBJECTS = ['soak-a', 'soak-b', 'soak-c', 'soak-d', 'soak-e'];
const keyOf = (s) => `${s}-key-0123456789abcdef`;

const log = (...m) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}]`, ...m);

async function main() {
  const images = readdirSync(IMAGES_DIR)
    .filter((f) => /\.(jpe?g|png|webp)$/i.test(f))
    .map((name) => ({ name, bytes: readFileSync(path.join(IMAGES_DIR, name)) }))
    .filter((i) => i.bytes.length < 2 * 1024 * 1024);
  const live = await startLiveServer(CLIP);
  const dep = new Deployment({
    keys: SUBJECTS.map((s) => `${keyOf(s)}:${s}`).join(','),
    env: {
      VISION_MODELS_DIR: path.join(SHARED, 'models'),
      STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
      QUOTA_VIDEO_DAILY: '100000',
      QUOTA_IMAGE_DAILY: '100000',
      // One subject at its daily quotas (5 video tasks, 100 images): 429 OP-QUOTA-DAILY-EXHAUSTED.
      QUOTA_OVERRIDES: JSON.stringify({ 'soak-e': { video: 5, image: 100 } }),
      TASKS_MAX_ACTIVE: '3',
      INFERENCE_MAX_JOBS: '4',
      INFERENCE_SAMPLE_FPS: String(args['sample-fps'] ?? 2),
      TASKS_POLL_INTERVAL_MS: '500',
      TASKS_PROBE_TIMEOUT_MS: '30000',
    },
  });
  log(`starting the deployment (${minutes} min of traffic, Kafka down ${kafkaDownMs / 1000} s at half time)`);
  try {
    await dep.start();
    await soak(dep, live, images);
  } finally {
    await dep.close().catch((err) => log('closing the deployment failed:', err.message));
    await live.close();
  }
}

async function soak(dep, live, images) {
  const c = new SoakClient(dep.url);
  const started = Date.now();
  const until = started + minutes * 60_000;
  const o = {
    until,
    drainUntil: until + 6 * 60_000,
    liveUrl: `${live.url}/live/clip.ts`,
    clip: readFileSync(CLIP),
    images,
    pauseMs: 200,
    imagePauseMs: 1500,
    pollMs: 2000,
    liveMinMs: 10_000,
    liveMaxMs: 40_000,
  };
  const rss = rssSampler(dep, SERVICES, 5000);
  const subjects = SUBJECTS.map((s) => t.newSubject(s, keyOf(s)));
  const loops = subjects.flatMap((s) => [
    t.videoLoop(c, s, o),
    t.lifecycleLoop(c, s, o),
    t.resultsLoop(c, s, o),
    t.imageLoop(c, s, o),
  ]);
  // The Kafka broker restart, in the middle.
  const kafka = (async () => {
    await t.sleep((until - started) / 2);
    log('stopping the Kafka broker');
    const down = Date.now();
    try {
      await stackScript('stop.sh', ['kafka']);
      await t.sleep(kafkaDownMs);
    } finally {
      await stackScript('start.sh', ['kafka']);
    }
    log(`Kafka broker back after ${((Date.now() - down) / 1000).toFixed(1)} s`);
    return Date.now() - down;
  })().catch((err) => {
    log('the Kafka restart failed:', err.message);
    return NaN;
  });
  await t.sleep(until - Date.now());
  log('traffic ends; stopping live tasks and waiting for every task to end');
  const drainStart = Date.now();
  await Promise.all(loops);
  const kafkaDown = await kafka;
  const drainMs = Date.now() - drainStart;
  rss.stop();

  const frames = await checkFrames(c, subjects, t.allFrames);
  const quota = await checkQuota(c, subjects, t.patiently);
  const report = figures({ c, subjects, frames, quota, rss, kafkaDown, drainMs, started, until });
  process.exitCode = report.missed > 0 || Number.isNaN(kafkaDown) ? 1 : 0;
}

function figures({ c, subjects, frames, quota, rss, kafkaDown, drainMs, started, until }) {
  const all = subjects.flatMap((s) => [...s.tasks.values()]);
  const by = (k) => all.filter((x) => x.final === k).length;
  log(
    `requests: ${c.requests} in ${((until - started) / 60_000).toFixed(1)} min; Kafka down ${(kafkaDown / 1000).toFixed(1)} s; drain ${(drainMs / 1000).toFixed(0)} s`,
  );
  const rows = [...c.tally.entries()].sort((a, b) => a[0].localeCompare(b[0]));
  for (const [label, n] of rows) console.log(`  ${label.padEnd(70)} ${n}`);
  log(
    `video tasks: ${all.length} created (${all.filter((x) => x.kind === 'file').length} uploads, ` +
      `${subjects.reduce((n, s) => n + s.queuedAtCreate, 0)} queued at creation); ended: ${by('succeeded')} succeeded, ` +
      `${by('stopped')} stopped, ${by('refunded')} refunded, ${by('failed')} failed, ${all.filter((x) => !x.final).length} not ended`,
  );
  log(
    `images: ${subjects.reduce((n, s) => n + s.images.size, 0)} calls, ${subjects.reduce((n, s) => n + [...s.images.values()].reduce((a, b) => a + b, 0), 0)} images succeeded; replays checked: ${subjects.reduce((n, s) => n + s.replays, 0)}`,
  );
  log(
    `frames: ${frames.frames} read back from ${frames.tasks} tasks (reference upload: ${frames.reference} frames); polled pages: ${subjects.reduce((n, s) => n + s.pagesRead, 0)}`,
  );
  console.log('  RSS (MB) per service: warm (30-50 %) -> end (last 20 %), ratio, limit');
  const rssRows = rss.summary(started, until);
  for (const r of rssRows)
    console.log(
      `  ${r.name.padEnd(12)} ${r.warm.toFixed(0).padStart(6)} -> ${r.end.toFixed(0).padStart(6)}  ${r.ratio.toFixed(2)}  <= ${rssLimit}`,
    );
  const problems = subjects.flatMap((s) => s.problems.map((p) => `${s.name}: ${p}`));
  const duplicatePages = subjects.reduce((n, s) => n + s.duplicatePages, 0);
  const notEnded = all.filter((x) => !x.final);
  // [name, problems found (each must be 0), the first few to print when there are any]
  const counted = [
    ['5xx beyond the documented 503s, and dropped connections', c.violations.length, c.violations],
    ['frames lost or duplicated', frames.problems.length + duplicatePages, frames.problems],
    [
      'double charges (quota used = tasks not refunded, images succeeded)',
      quota.problems.length,
      quota.problems,
    ],
    ['replays not answering the original, unexpected answers', problems.length, problems],
    ['tasks not ended', notEnded.length, notEnded.map((x) => `${x.id} (${x.kind}) last seen ${x.last}`)],
  ];
  for (const [name, n, details] of counted)
    if (n > 0)
      for (const d of details.slice(0, 5))
        console.log(`  ${name}: ${typeof d === 'string' ? d : JSON.stringify(d)}`);
  const { missed } = report([
    ...counted.map(([name, n]) => ({ name, value: n, limit: '= 0', ok: n === 0 })),
    ...rssRows.map((r) => ({
      name: `RSS of ${r.name}, end / warm`,
      value: r.ratio.toFixed(2),
      limit: `<= ${rssLimit}`,
      ok: r.ratio <= rssLimit,
    })),
  ]);
  return { missed };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
