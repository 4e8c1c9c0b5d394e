'use strict';
/* global performance */
/**
 * The limits the image and inference benches compare the service with, measured in the same run, with
 * the model file and session settings of the inference service (OnnxModel.load):
 * - raw model: `session.run` alone on prepared tensors;
 * - raw pipeline: decode + letterbox + tensor + `session.run` in a tight loop written here (sharp
 *   decodes, resizes and pads in one libvips pass; BGR planes packed into one reused Float32Array),
 *   sequential, and overlapped (the next image decodes while the model runs on this one).
 */
const path = require('node:path');
const fs = require('node:fs');

const root = path.resolve(__dirname, '../..');
const inference = require(path.join(root, 'services/inference/dist/index.js'));
const sharp = require(require.resolve('sharp', { paths: [path.join(root, 'services/inference')] }));

const PAD = 114;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};

async function loadModel(modelsDir) {
  const labels = inference.parseLabels(
    fs.readFileSync(path.join(modelsDir, 'yolox_nano.labels.txt'), 'utf8'),
  );
  return inference.OnnxModel.load(path.join(modelsDir, 'yolox_nano.onnx'), { decoder: 'yolox', labels });
}

/** Decode + letterbox (one libvips pass) + BGR planar float packing: the least work an image needs. */
async function tightPrepare(data, size, out) {
  const meta = await sharp(data).metadata();
  const o = meta.autoOrient ?? { width: meta.width, height: meta.height };
  const r = Math.min(size / o.height, size / o.width);
  const w = Math.min(size, Math.max(1, Math.round(o.width * r)));
  const h = Math.min(size, Math.max(1, Math.round(o.height * r)));
  const px = await sharp(data)
    .rotate()
    .removeAlpha()
    .toColourspace('srgb')
    .resize(w, h, { kernel: 'linear', fit: 'fill' })
    .extend({ right: size - w, bottom: size - h, background: { r: PAD, g: PAD, b: PAD } })
    .raw()
    .toBuffer();
  const plane = size * size;
  for (let i = 0, s = 0; i < plane; i++, s += 3) {
    out[i] = px[s + 2];
    out[plane + i] = px[s + 1];
    out[2 * plane + i] = px[s];
  }
  return out;
}

/** session.run alone on the prepared tensors of `images`: median ms per image. */
async function rawModel(model, images, reps, warmup = 2) {
  const size = model.inputSize;
  const tensors = [];
  for (const img of images) tensors.push(await tightPrepare(img, size, new Float32Array(3 * size * size)));
  for (let w = 0; w < warmup; w++) for (const t of tensors) await model.runRaw(t);
  const times = [];
  for (let r = 0; r < reps; r++)
    for (const t of tensors) {
      const t0 = performance.now();
      await model.runRaw(t);
      times.push(performance.now() - t0);
    }
  return median(times);
}

/**
 * The raw pipeline over `images`, `reps` rounds after one warm-up round. Sequential: each image is
 * decoded, then run (median ms per image, and per image of the list). Overlapped: image i+1 decodes
 * while the model runs on image i (median over rounds of round time / images).
 */
async function rawPipeline(model, images, reps) {
  const size = model.inputSize;
  const bufs = [new Float32Array(3 * size * size), new Float32Array(3 * size * size)];
  const seqTimes = [];
  const perImage = images.map(() => []);
  for (let r = -1; r < reps; r++)
    for (let i = 0; i < images.length; i++) {
      const t0 = performance.now();
      await model.runRaw(await tightPrepare(images[i], size, bufs[0]));
      const dt = performance.now() - t0;
      if (r >= 0) {
        seqTimes.push(dt);
        perImage[i].push(dt);
      }
    }
  const overlapRounds = [];
  for (let r = -1; r < reps; r++) {
    const t0 = performance.now();
    let next = tightPrepare(images[0], size, bufs[0]);
    for (let i = 0; i < images.length; i++) {
      const tensor = await next;
      if (i + 1 < images.length) next = tightPrepare(images[i + 1], size, bufs[(i + 1) % 2]);
      await model.runRaw(tensor);
    }
    if (r >= 0) overlapRounds.push((performance.now() - t0) / images.length);
  }
  const sequential = median(seqTimes);
  const overlapped = median(overlapRounds);
  return {
    sequential,
    overlapped,
    best: Math.min(sequential, overlapped),
    perImage: perImage.map(median),
  };
}

/** Counts met targets and prints the closing line. `checks`: [{ name, value, limit, ok }]. */
function report(checks) {
  let met = 0;
  for (const c of checks) {
    if (c.ok) met++;
    console.log(`target ${c.name}: ${c.value} (limit ${c.limit}) ${c.ok ? 'MET' : 'MISSED'}`);
  }
  console.log(`targets: ${met} met, ${checks.length - met} missed`);
}

module.exports = { loadModel, tightPrepare, rawModel, rawPipeline, report, median, percentile };
