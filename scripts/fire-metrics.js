/**
 * Fire detection metrics on ../shared/datasets/dfire-valid, shared by scripts/eval-fire.js (built-in
 * detector), scripts/eval-fire-service.js (any engine, through the public image endpoint) and the
 * fire tests. Boxes are {x1, y1, x2, y2} in original-image pixels.
 *
 *   - image level: an image is predicted positive when any fire detection scores >= the lower bound;
 *     it is positive when it has at least one fire box.
 *   - box AP50: greedy matching by descending score at IoU >= 0.5 (each labelled box matched at most
 *     once), precision made monotone and integrated over all recall points (VOC 2010+ "all points").
 */
'use strict';
const fs = require('fs');
const path = require('path');

/** The dataset's images with their fire boxes: [{id, file, path, gts}]. */
function loadDfire(datasetDir) {
  const ann = JSON.parse(fs.readFileSync(path.join(datasetDir, 'annotations.json'), 'utf8'));
  const gtsById = new Map();
  for (const a of ann.annotations) {
    if (a.category_id !== 1) continue;
    const [x, y, w, h] = a.bbox;
    if (!gtsById.has(a.image_id)) gtsById.set(a.image_id, []);
    gtsById.get(a.image_id).push({ x1: x, y1: y, x2: x + w, y2: y + h });
  }
  return ann.images.map((im) => ({
    id: im.id,
    file: im.file_name,
    path: path.join(datasetDir, 'images', im.file_name),
    width: im.width,
    height: im.height,
    gts: gtsById.get(im.id) ?? [],
  }));
}

function iou(a, b) {
  const iw = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1);
  const ih = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1);
  if (iw <= 0 || ih <= 0) return 0;
  const inter = iw * ih;
  return inter / ((a.x2 - a.x1) * (a.y2 - a.y1) + (b.x2 - b.x1) * (b.y2 - b.y1) - inter);
}

function apAllPoints(dets, nGt) {
  // dets: [{score, tp}] over the whole split
  const sorted = [...dets].sort((a, b) => b.score - a.score);
  const rec = [];
  const prec = [];
  let tp = 0;
  let fp = 0;
  for (const d of sorted) {
    if (d.tp) tp++;
    else fp++;
    rec.push(tp / nGt);
    prec.push(tp / (tp + fp));
  }
  const mrec = [0, ...rec, 1];
  const mpre = [0, ...prec, 0];
  for (let i = mpre.length - 2; i >= 0; i--) mpre[i] = Math.max(mpre[i], mpre[i + 1]);
  let ap = 0;
  for (let i = 1; i < mrec.length; i++) ap += (mrec[i] - mrec[i - 1]) * mpre[i];
  return ap;
}

/** Greedy COCO/VOC-style matching at IoU >= 0.5 within one image. */
function matchImage(dets, gts) {
  const used = new Array(gts.length).fill(false);
  const out = [];
  for (const d of [...dets].sort((a, b) => b.score - a.score)) {
    let best = -1;
    let bestIou = 0.5;
    for (let j = 0; j < gts.length; j++) {
      if (used[j]) continue;
      const v = iou(d.box, gts[j]);
      if (v >= bestIou) {
        bestIou = v;
        best = j;
      }
    }
    if (best >= 0) used[best] = true;
    out.push({ score: d.score, tp: best >= 0 });
  }
  return out;
}

/** records: [{gts, fire: [{box, ...}]}]; scoreOf(candidate) gives its score. */
function evaluate(records, scoreOf, lowerBound) {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let tn = 0;
  const all = [];
  let nGt = 0;
  for (const r of records) {
    const dets = r.fire.map((c) => ({ box: c.box, score: scoreOf(c) }));
    const predicted = dets.some((d) => d.score >= lowerBound);
    const positive = r.gts.length > 0;
    if (predicted && positive) tp++;
    else if (predicted) fp++;
    else if (positive) fn++;
    else tn++;
    nGt += r.gts.length;
    all.push(...matchImage(dets, r.gts));
  }
  return {
    images: records.length,
    tp,
    fp,
    fn,
    tn,
    precision: tp + fp ? tp / (tp + fp) : 1,
    recall: tp + fn ? tp / (tp + fn) : 1,
    ap50: apAllPoints(all, nGt),
    gtBoxes: nGt,
  };
}

module.exports = { loadDfire, iou, apAllPoints, matchImage, evaluate };
