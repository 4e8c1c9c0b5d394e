'use strict';
/** The soak's checks at the end (bench/soak.js): frames of every task, quota of every subject, RSS. */
const { readFileSync } = require('node:fs');

/**
 * Every task's frames, paged to the end: frame ids unique, seqs (frame_id `<task>:<seq>`) contiguous
 * from 0; every succeeded upload (all the same clip) has the same number of frames as the others.
 */
async function checkFrames(c, subjects, allFrames) {
  const problems = [];
  const uploads = [];
  let frames = 0;
  let tasks = 0;
  for (const s of subjects)
    for (const t of s.tasks.values()) {
      const r = await allFrames(c, s.key, t.id);
      tasks++;
      frames += r.frames.length;
      if (r.error) problems.push(`${t.id}: ${r.error}`);
      const ids = r.frames.map((f) => f.frame_id);
      if (new Set(ids).size !== ids.length)
        problems.push(`${t.id}: ${ids.length - new Set(ids).size} duplicate frames`);
      const seqs = ids.map((id) => Number(id.slice(id.lastIndexOf(':') + 1))).sort((a, b) => a - b);
      const gaps = seqs.filter((q, i) => q !== i).length;
      if (gaps > 0)
        problems.push(
          `${t.id} (${t.kind}, ${t.final}): seqs not contiguous from 0 (${seqs.length} frames, last ${seqs.at(-1)})`,
        );
      if (t.kind === 'file' && t.final === 'succeeded') uploads.push({ id: t.id, n: r.frames.length });
    }
  // The reference: the count most uploads of the clip have.
  const counts = new Map();
  for (const u of uploads) counts.set(u.n, (counts.get(u.n) ?? 0) + 1);
  const reference = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 0;
  for (const u of uploads)
    if (u.n !== reference) problems.push(`${u.id}: upload has ${u.n} frames, the clip has ${reference}`);
  return { problems, frames, tasks, reference };
}

/** Quota `used` per subject = its tasks not refunded (video) and the images that succeeded. */
async function checkQuota(c, subjects, patiently) {
  const problems = [];
  for (const s of subjects) {
    const r = await patiently(() => c.quota(s.key));
    if (r.status !== 200) {
      problems.push(`${s.name}: quota answered ${r.status}`);
      continue;
    }
    const video = [...s.tasks.values()].filter((t) => t.final !== 'refunded').length;
    const images = [...s.images.values()].reduce((a, b) => a + b, 0);
    if (r.body.video_tasks.used !== video)
      problems.push(`${s.name}: video used ${r.body.video_tasks.used}, expected ${video}`);
    if (r.body.images.used !== images)
      problems.push(`${s.name}: images used ${r.body.images.used}, expected ${images}`);
  }
  return { problems };
}

function rssKb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Samples the RSS of every service process every `everyMs`; summary() over the traffic window. */
function rssSampler(dep, services, everyMs) {
  const samples = new Map();
  const sample = () => {
    const now = Date.now();
    for (const name of services)
      for (const p of dep.procs[name] ?? []) {
        const kb = p.child && rssKb(p.child.pid);
        const label = dep.procs[name].length > 1 ? `${name}-${p.index}` : name;
        if (kb !== undefined) samples.set(label, [...(samples.get(label) ?? []), { at: now, kb }]);
      }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop: () => clearInterval(timer),
    /** Mean RSS (MB) between 30 % and 50 % of [from, to] and over its last 20 %, and their ratio. */
    summary(from, to) {
      const span = to - from;
      const mean = (xs) => xs.reduce((a, b) => a + b.kb, 0) / Math.max(1, xs.length) / 1024;
      return [...samples.entries()].map(([name, xs]) => {
        const warm = mean(xs.filter((x) => x.at >= from + 0.3 * span && x.at < from + 0.5 * span));
        const end = mean(xs.filter((x) => x.at >= from + 0.8 * span && x.at <= to));
        return { name, warm, end, ratio: warm > 0 ? end / warm : Infinity };
      });
    },
  };
}

module.exports = { checkFrames, checkQuota, rssSampler };
