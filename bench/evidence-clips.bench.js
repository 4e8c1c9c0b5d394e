/**
 * Best shots on ../shared's clips (docs/EVIDENCE.md, "Best shot per track"): the share of tracks whose
 * `best_shot_path` answers a picture. Run after `npm run build`:
 *
 *   node bench/evidence-clips.bench.js [--clips pedestrians_vtest_opencv_10s.mov,...] [--json FILE]
 *
 * Starts the standalone stack in this process, sends each clip as a file task with one zone covering the whole
 * frame (so that every tracked object is evaluated), waits until every event is in, reads every result frame
 * (min_score 0) and then each track's best shot once. Per clip: the tracks, those seen in at least 3 frames, the
 * share of each with a picture (200), the pictures by `x-best-shot-rule`, the answers without one by reason, and,
 * from the same frames, how many tracks have a box that passes the size rule in force before the pixel rule (1 %
 * of the frame, 0.5 % from its edges) and the pixel rule (services/results/dist/domain/evidence/best-shot.js when
 * built), and how many best-shot pictures either rule takes with one evaluation step per frame (the most: a step
 * takes at most one per track), per track and per second of video, against the 10 pictures a second that the
 * evidence bench's target is sized for (bench/evidence.bench.js). The tracker's output decides the figures:
 * compare runs of one build.
 */
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { randomUUID } = require('node:crypto');
const { parseArgs } = require('./lib/args');

const root = path.resolve(__dirname, '..');
const shared = require(path.join(root, 'packages/shared/dist/index.js'));
const { startStandalone } = require(path.join(root, 'apps/standalone/dist/index.js'));
const SHARED_DIR = process.env.VISION_SHARED_DIR ?? path.resolve(root, '../shared');
let pixelRule;
try {
  pixelRule = require(path.join(root, 'services/results/dist/domain/evidence/best-shot.js'));
} catch {
  pixelRule = undefined; // a build before the pixel rule
}

const CLIPS = {
  'pedestrians_vtest_opencv_10s.mov': 'person_vehicle',
  'pedestrians_vtest_opencv.mp4': 'person_vehicle',
  'person_bicycle_car_parkinglot_intel.mp4': 'person_vehicle',
  'vehicles_parkinglot_topdown_intel.mp4': 'person_vehicle',
  'fire_smoke_stills_dfire_synth.mp4': 'fire_smoke',
  'boats_kodak_pan_synth.mp4': 'ship',
};
const args = parseArgs(process.argv.slice(2));
const chosen = args.clips ? String(args.clips).split(',') : Object.keys(CLIPS);
const KEY = 'bench-evidence-clips-key-0123456789';
const WHOLE = {
  id: 'all',
  polygon: [
    [0, 0],
    [1, 0],
    [1, 1],
    [0, 1],
  ],
};

/** The size rule before the pixel rule: 1 % of the frame's area, 0.5 % of its width (height) from its edges. */
function oldRule(o) {
  const { cx, cy, width, height } = o.bbox;
  const c = (v) => Math.min(1, Math.max(0, v));
  const b = [c(cx - width / 2), c(cy - height / 2), c(cx + width / 2), c(cy + height / 2)];
  const m = 0.005;
  const e = 1e-9;
  const area = (b[2] - b[0]) * (b[3] - b[1]);
  return area >= 0.01 - e && b[0] >= m - e && b[1] >= m - e && b[2] <= 1 - m + e && b[3] <= 1 - m + e;
}

function newRule(o, image) {
  if (!pixelRule) return false;
  const { cx, cy, width, height } = o.bbox;
  const stored = { l: o.label, s: o.score, b: [cx, cy, width, height] };
  return pixelRule.sizeRuleOf(stored, image) === 'met';
}

/**
 * One evaluation step of a result frame: the best-shot pictures the rules would take for it, counted in `taken`
 * (the 1 % rule: a passing box 0.05 better than the kept one; the pixel rule: best-shot.js's candidates).
 */
function simulateSteps(f, taken) {
  const seen = new Set();
  const objects = [];
  for (const o of f.objects) {
    if (o.track_id === undefined || seen.has(o.track_id)) continue;
    seen.add(o.track_id);
    const { cx, cy, width, height } = o.bbox;
    objects.push({ l: o.label, s: o.score, b: [cx, cy, width, height], t: o.track_id });
    const k = taken.keptOld.get(o.track_id);
    if (oldRule(o) && (k === undefined || o.score >= k + 0.05)) {
      taken.keptOld.set(o.track_id, o.score);
      taken.old++;
    }
  }
  if (!pixelRule) return;
  const frame = { seq: 0, width: f.image.width, height: f.image.height, objects };
  for (const c of pixelRule.bestShotCandidates([frame], taken.kept)) {
    taken.kept.set(c.trackId, { score: c.score, rule: c.rule });
    taken.pixel++;
  }
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evidence-clips-'));
  const stack = await startStandalone({
    ports: 'ephemeral',
    logger: shared.createLogger('evidence-clips', { level: 'silent' }),
    env: {
      PATH: process.env.PATH,
      LOG_LEVEL: 'silent',
      VISION_DATA_DIR: dir,
      VISION_API_KEYS: `${KEY}:bench`,
      QUOTA_VIDEO_DAILY: '100',
      RESULTS_JANITOR_INTERVAL_MS: '0',
    },
  });
  const call = async (method, p, body, headers = {}) => {
    let res;
    // The key's request rate is limited: a 429 is sent again after its Retry-After.
    for (let i = 0; i < 20; i++) {
      res = await fetch(`${stack.url}${p}`, {
        method,
        body,
        headers: { authorization: `Bearer ${KEY}`, ...headers },
      });
      if (res.status !== 429) break;
      await res.arrayBuffer();
      await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
    }
    const type = res.headers.get('content-type') ?? '';
    return {
      status: res.status,
      headers: res.headers,
      body: type.includes('json') ? await res.json() : Buffer.from(await res.arrayBuffer()),
    };
  };
  const out = [];
  try {
    for (const clip of chosen) {
      const form = new FormData();
      form.append('scene_code', CLIPS[clip]);
      form.append('zones', JSON.stringify([WHOLE]));
      form.append('file', new Blob([fs.readFileSync(path.join(SHARED_DIR, 'media/videos', clip))]), clip);
      const created = await call('POST', '/v1/vision/video-tasks', form, { 'idempotency-key': randomUUID() });
      if (created.status !== 201)
        throw new Error(`${clip}: ${created.status} ${JSON.stringify(created.body)}`);
      const id = created.body.task_id;
      const t0 = Date.now();
      for (;;) {
        const r = await call('GET', `/v1/vision/tasks/${id}/events?limit=500`);
        const task = await call('GET', `/v1/vision/tasks/${id}`);
        if (r.body.next_cursor === '' && !['queued', 'running'].includes(task.body.status)) break;
        if (Date.now() - t0 > 600_000) throw new Error(`${clip}: not ended in 10 minutes`);
        await new Promise((r2) => setTimeout(r2, 1000));
      }
      const tracks = new Map();
      // Best-shot pictures taken with one evaluation step per frame (the most there can be), by either rule.
      const taken = { old: 0, pixel: 0, keptOld: new Map(), kept: new Map() };
      let lastMs = 0;
      let frames = 0;
      let cursor = '';
      for (;;) {
        const q = `limit=500&min_score=0${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const r = await call('GET', `/v1/vision/tasks/${id}/results?${q}`);
        for (const f of r.body.items) {
          simulateSteps(f, taken);
          frames++;
          lastMs = f.frame_time_ms;
          for (const o of f.objects) {
            if (o.track_id === undefined) continue;
            const t = tracks.get(o.track_id) ?? { frames: 0, path: undefined, old: false, pixel: false };
            t.frames++;
            t.path ??= o.best_shot_path;
            t.old ||= oldRule(o);
            t.pixel ||= newRule(o, f.image);
            // The box at the detection size (the models' input, 416, holds the frame's longer side).
            const k = 416 / Math.max(f.image.width, f.image.height);
            const [w, h] = [o.bbox.width * f.image.width * k, o.bbox.height * f.image.height * k];
            if (!t.box || w * h > t.box[0] * t.box[1]) t.box = [Math.round(w), Math.round(h)];
            tracks.set(o.track_id, t);
          }
        }
        cursor = r.body.next_cursor;
        if (!cursor) break;
      }
      const row = {
        clip,
        tracks: tracks.size,
        tracks3: 0,
        pictured: 0,
        pictured3: 0,
        old: 0,
        old3: 0,
        pixel: 0,
      };
      row.rules = {};
      row.missing = {};
      row.boxes = [...tracks.values()].map((t) => [t.frames, ...t.box]);
      row.seconds = lastMs / 1000;
      row.frames = frames;
      row.takenOld = taken.old;
      row.taken = taken.pixel;
      for (const [, t] of tracks) {
        const long = t.frames >= 3;
        if (long) row.tracks3++;
        if (t.old) row.old++;
        if (t.old && long) row.old3++;
        if (t.pixel) row.pixel++;
        const r = t.path ? await call('GET', t.path) : { status: 0, headers: new Headers(), body: {} };
        if (r.status === 200) {
          row.pictured++;
          if (long) row.pictured3++;
          const rule = r.headers.get('x-best-shot-rule') ?? '(none)';
          row.rules[rule] = (row.rules[rule] ?? 0) + 1;
        } else {
          const why = t.path ? (r.body?.error?.details?.snapshot_reason ?? String(r.status)) : 'no path';
          row.missing[why] = (row.missing[why] ?? 0) + 1;
        }
      }
      out.push(row);
      const pct = (a, b) => (b ? `${((100 * a) / b).toFixed(0)} %` : '-');
      console.log(
        `${clip}: ${row.tracks} tracks, pictured ${row.pictured} (${pct(row.pictured, row.tracks)}); ` +
          `seen in >= 3 frames ${row.tracks3}, pictured ${row.pictured3} (${pct(row.pictured3, row.tracks3)}); ` +
          `by rule ${JSON.stringify(row.rules)}; without ${JSON.stringify(row.missing)}; ` +
          `a box passing the 1 % rule: ${row.old} (${pct(row.old, row.tracks)}; ` +
          `>= 3 frames ${row.old3}, ${pct(row.old3, row.tracks3)}), ` +
          `the pixel rule: ${pixelRule ? row.pixel : '(not built)'}; best-shot pictures at one step a frame: ` +
          `${row.takenOld} with the 1 % rule, ${row.taken} now (${(row.taken / Math.max(1, row.tracks)).toFixed(1)} ` +
          `a track, ${(row.taken / Math.max(0.001, row.seconds)).toFixed(2)} a second of video)`,
      );
    }
  } finally {
    await stack.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (args.json) fs.writeFileSync(String(args.json), JSON.stringify(out, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
