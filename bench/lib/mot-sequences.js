'use strict';
/**
 * MOTChallenge-format sequences for the tracking bench: seqinfo.ini, the public detections (det/det.txt:
 * frame, -1, left, top, width, height, score, ...), the frames a rate keeps, and the service's tracker run
 * on them, its output written in the MOT result format (frame, id, left, top, width, height, 1, -1, -1, -1).
 */
const fs = require('node:fs');
const path = require('node:path');

function readSequence(motDir, name) {
  const dir = path.join(motDir, name);
  const ini = fs.readFileSync(path.join(dir, 'seqinfo.ini'), 'utf8');
  const field = (key) => {
    const m = new RegExp(`^${key}\\s*=\\s*(.+)$`, 'm').exec(ini);
    if (!m) throw new Error(`${name}/seqinfo.ini has no ${key}`);
    return m[1].trim();
  };
  const dets = new Map();
  for (const line of fs.readFileSync(path.join(dir, 'det', 'det.txt'), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const [frame, , left, top, w, h, score] = line.split(',').map(Number);
    if (!dets.has(frame)) dets.set(frame, []);
    dets.get(frame).push({ label: 'person', score, box: { x1: left, y1: top, x2: left + w, y2: top + h } });
  }
  // The frame's width, when given: the tracker takes the aspect of a box at the frame's side as measured.
  const width = /^imWidth\s*=\s*(\d+)/m.exec(ini);
  return {
    name,
    fps: Number(field('frameRate')),
    length: Number(field('seqLength')),
    width: width ? Number(width[1]) : undefined,
    dets,
  };
}

/** The sequences of a MOT folder: those with a seqinfo.ini, by name. */
function listSequences(motDir) {
  return fs
    .readdirSync(motDir)
    .filter((n) => fs.existsSync(path.join(motDir, n, 'seqinfo.ini')))
    .sort();
}

/** Frames kept at one frame in k: 1, 1 + k, 1 + 2k, ... */
function keptFrames(length, k) {
  const out = [];
  for (let f = 1; f <= length; f += k) out.push(f);
  return out;
}

/** Every k-th frame, k = round(fps / target) (at least 1). */
const stepFor = (fps, targetFps) => Math.max(1, Math.round(fps / targetFps));

/**
 * Runs `makeTracker()` over the sequence's kept frames, each at its media time ((frame - 1) / fps); returns
 * the MOT result lines.
 */
function trackSequence(seq, k, makeTracker) {
  const tracker = makeTracker();
  const lines = [];
  for (const frame of keptFrames(seq.length, k)) {
    const out = tracker.update(seq.dets.get(frame) ?? [], ((frame - 1) * 1000) / seq.fps, seq.width);
    for (const d of out) {
      const b = d.box;
      lines.push(
        `${frame},${d.trackId},${b.x1.toFixed(2)},${b.y1.toFixed(2)},${(b.x2 - b.x1).toFixed(2)},${(b.y2 - b.y1).toFixed(2)},1,-1,-1,-1`,
      );
    }
  }
  return lines;
}

function writeResult(file, lines) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, lines.length ? lines.join('\n') + '\n' : '');
}

module.exports = { readSequence, listSequences, keptFrames, stepFor, trackSequence, writeResult };
