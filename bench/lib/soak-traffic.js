'use strict';
/**
 * The soak's traffic (bench/soak.js): per subject, loops that create video tasks (live streams and
 * uploads, alternately, as fast as the limits let them, with replays of the same Idempotency-Key),
 * stop them, poll their status and results, and send image batches (with replays). Each loop keeps
 * what it was answered, for the checks at the end.
 */
const { randomUUID } = require('node:crypto');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rand = (lo, hi) => lo + Math.floor(Math.random() * (hi - lo));
const TERMINAL = new Set(['stopped', 'succeeded', 'failed', 'refunded']);

/** The wait a 429/503 asks for (Retry-After, seconds), bounded to [0.3 s, 3 s]. */
function backoff(r) {
  const s = Number(r.headers.get('retry-after'));
  return Math.min(3000, Math.max(300, Number.isFinite(s) ? s * 1000 : 1000));
}

function newSubject(name, key) {
  return {
    name,
    key,
    /** task id -> { id, kind, createdStatus, stopAt, stopped, final } */
    tasks: new Map(),
    /** image call Idempotency-Key -> images that succeeded */
    images: new Map(),
    queuedAtCreate: 0,
    replays: 0,
    problems: [],
    pagesRead: 0,
    duplicatePages: 0,
  };
}

async function videoLoop(c, s, o) {
  for (let n = 0; Date.now() < o.until; n++) {
    const live = n % 2 === 0;
    const idem = randomUUID();
    const create = () =>
      live ? c.createLive(s.key, idem, o.liveUrl) : c.createFile(s.key, idem, o.clip, 'clip.mov');
    const r = await create();
    if (r.status === 201 || r.status === 202) {
      const stopAt = live
        ? Date.now() + rand(o.liveMinMs, o.liveMaxMs)
        : Math.random() < 0.2
          ? Date.now() + rand(0, 4000) // some uploads are stopped, queued ones included
          : Infinity;
      s.tasks.set(r.body.task_id, {
        id: r.body.task_id,
        kind: live ? 'live' : 'file',
        stopAt,
        stopped: false,
      });
      if (r.body.status === 'submitting') s.queuedAtCreate++;
      if (Math.random() < 0.25) {
        const again = await create();
        if (again.status === 200 || again.status === 201 || again.status === 202) {
          s.replays++;
          if (again.status !== 200 || again.body.task_id !== r.body.task_id)
            s.problems.push(`replay of ${r.body.task_id} answered ${again.status} ${again.body?.task_id}`);
        }
      }
    } else if (r.status === 429 || r.status === 503) await sleep(backoff(r));
    else if (r.status !== 400) s.problems.push(`create answered ${r.status}`);
    await sleep(o.pauseMs);
  }
}

/**
 * Stops the tasks whose time has come (after the traffic, every live task), and follows every task's
 * status until it ends or `o.drainUntil` passes.
 */
async function lifecycleLoop(c, s, o) {
  while (Date.now() < o.drainUntil) {
    const draining = Date.now() >= o.until;
    for (const t of s.tasks.values()) {
      if (t.final) continue;
      if (!t.stopped && (t.stopAt <= Date.now() || (draining && t.kind === 'live'))) {
        const r = await c.stop(s.key, t.id);
        if (r.status === 200 || r.status === 202 || r.status === 409) t.stopped = true;
      }
      const g = await c.getTask(s.key, t.id);
      if (g.status === 200) t.last = g.body.status;
      if (g.status === 200 && TERMINAL.has(g.body.status)) t.final = g.body.status;
    }
    if (draining && [...s.tasks.values()].every((t) => t.final)) return;
    await sleep(1000);
  }
}

/** Pages the results of the subject's unfinished tasks (the first two pages), as a caller polling would. */
async function resultsLoop(c, s, o) {
  while (Date.now() < o.until) {
    const open = [...s.tasks.values()].filter((t) => !t.final);
    for (const t of open.slice(0, 3)) {
      const seen = new Set();
      let cursor = '';
      for (let page = 0; page < 2; page++) {
        const r = await c.results(s.key, t.id, cursor);
        if (r.status !== 200) break;
        s.pagesRead++;
        for (const f of r.body.items) {
          if (seen.has(f.frame_id)) s.duplicatePages++;
          seen.add(f.frame_id);
        }
        cursor = r.body.next_cursor;
        if (!cursor) break;
      }
    }
    await sleep(o.pollMs);
  }
}

async function imageLoop(c, s, o) {
  while (Date.now() < o.until) {
    const k = rand(1, 11);
    const batch = Array.from({ length: k }, () => o.images[rand(0, o.images.length)]);
    const idem = randomUUID();
    const r = await c.detectImages(s.key, idem, batch);
    if (r.status === 201) {
      const ok = r.body.results.filter((x) => x.status === 'succeeded').length;
      s.images.set(idem, ok);
      if (Math.random() < 0.2) {
        const again = await c.detectImages(s.key, idem, batch);
        if (again.status === 200 || again.status === 201) {
          s.replays++;
          const ok2 = again.body.results.filter((x) => x.status === 'succeeded').length;
          if (again.status !== 200 || ok2 !== ok)
            s.problems.push(`image replay ${idem} answered ${again.status} with ${ok2} of ${ok} succeeded`);
        }
      }
    } else if (r.status === 429 || r.status === 503) await sleep(backoff(r));
    else s.problems.push(`image call answered ${r.status}`);
    await sleep(o.imagePauseMs);
  }
}

/** Calls `fn` until it is not answered 429/503 (the checks run at the limits too), at most 20 times. */
async function patiently(fn) {
  for (let i = 0; ; i++) {
    const r = await fn();
    if ((r.status !== 429 && r.status !== 503) || i >= 20) return r;
    await sleep(backoff(r));
  }
}

/** Every frame of a task (min_score 0: all stored detections), paged until a page brings nothing new. */
async function allFrames(c, key, id) {
  const frames = [];
  let cursor = '';
  for (let page = 0; page < 10_000; page++) {
    const r = await patiently(() => c.results(key, id, cursor));
    if (r.status !== 200) return { error: `results answered ${r.status}`, frames };
    frames.push(...r.body.items);
    cursor = r.body.next_cursor;
    if (!cursor || r.body.items.length === 0) return { frames };
  }
  return { error: 'too many pages', frames };
}

module.exports = {
  newSubject,
  videoLoop,
  lifecycleLoop,
  resultsLoop,
  imageLoop,
  allFrames,
  patiently,
  sleep,
  TERMINAL,
};
