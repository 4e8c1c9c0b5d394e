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
  const text = fs.readFileSync(path.join(modelsDir, 'yolox_nano.labels.txt'), 'utf8');
  const labels = text.trim().split(/\r?\n/);
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

/**
 * The raw model and the raw pipeline over `images`, measured in rounds that a bench interleaves with
 * its service measurements (the machine's load drifts; interleaving exposes both to the same drift).
 * A round: `session.run` alone on each prepared tensor; then each image decoded and run, sequentially;
 * then the list again with image i+1 decoding while the model runs on image i.
 */
class RawLimits {
  constructor(model, images) {
    this.model = model;
    this.images = images;
    this.size = model.inputSize;
    this.bufs = [0, 1].map(() => new Float32Array(3 * this.size * this.size));
    this.modelTimes = [];
    this.seqTimes = [];
    this.perImage = images.map(() => []);
    this.overlapRounds = [];
  }

  async warmUp() {
    this.tensors = [];
    for (const img of this.images)
      this.tensors.push(await tightPrepare(img, this.size, new Float32Array(3 * this.size * this.size)));
    for (const t of this.tensors) await this.model.runRaw(t);
    for (const img of this.images) await this.model.runRaw(await tightPrepare(img, this.size, this.bufs[0]));
  }

  /** `session.run` alone on each prepared tensor. */
  async modelRound() {
    for (const t of this.tensors) {
      const t0 = performance.now();
      await this.model.runRaw(t);
      this.modelTimes.push(performance.now() - t0);
    }
  }

  async round() {
    const { model, images, size, bufs } = this;
    await this.modelRound();
    for (let i = 0; i < images.length; i++) {
      const t0 = performance.now();
      await model.runRaw(await tightPrepare(images[i], size, bufs[0]));
      const dt = performance.now() - t0;
      this.seqTimes.push(dt);
      this.perImage[i].push(dt);
    }
    const t0 = performance.now();
    let next = tightPrepare(images[0], size, bufs[0]);
    for (let i = 0; i < images.length; i++) {
      const tensor = await next;
      if (i + 1 < images.length) next = tightPrepare(images[i + 1], size, bufs[(i + 1) % 2]);
      await model.runRaw(tensor);
    }
    this.overlapRounds.push((performance.now() - t0) / images.length);
  }

  /** Medians in ms per image: model, sequential, overlapped, best pipeline, and per image (sequential). */
  summary() {
    const sequential = median(this.seqTimes);
    const overlapped = median(this.overlapRounds);
    return {
      model: median(this.modelTimes),
      sequential,
      overlapped,
      best: Math.min(sequential, overlapped),
      perImage: this.perImage.map(median),
    };
  }
}

/** The raw model alone: median ms per image of `session.run` over `reps` rounds of `images`. */
async function rawModel(model, images, reps) {
  const raw = new RawLimits(model, images);
  await raw.warmUp();
  for (let r = 0; r < reps; r++) await raw.modelRound();
  return raw.summary().model;
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

module.exports = { loadModel, tightPrepare, RawLimits, rawModel, report, median, percentile };
