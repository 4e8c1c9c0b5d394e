'use strict';
/* global performance */
/**
 * The limits the image and inference benches compare the service with, measured in the same run, with
 * the model file and session settings of the inference service (OnnxModel.load with the service's
 * INFERENCE_MODEL_SESSIONS and INFERENCE_INTRA_OP_THREADS, read from the environment as the service does):
 * - raw model: `session.run` alone on prepared tensors, as many runs at once as the model has sessions
 *   (its throughput: with one session, one run after the other);
 * - raw pipeline: decode + letterbox + tensor + `session.run` in a tight loop written here (sharp
 *   decodes, resizes and pads in one libvips pass; BGR planes packed into one reused Float32Array),
 *   sequential, and overlapped (the next image decodes while the model runs on this one; with several
 *   sessions, one such loop per session at once).
 */
const path = require('node:path');
const fs = require('node:fs');
const { report } = require('./targets');

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

/** The inference settings a bench hands on from its environment to the service it starts (the limits read them too). */
const SERVICE_SETTINGS = ['INFERENCE_MODEL_SESSIONS', 'INFERENCE_INTRA_OP_THREADS', 'INFERENCE_LIVE_QUEUE'];
function serviceEnv() {
  return Object.fromEntries(
    SERVICE_SETTINGS.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]),
  );
}

/** The service's session settings (INFERENCE_MODEL_SESSIONS, INFERENCE_INTRA_OP_THREADS) from the environment. */
function sessionSettings() {
  const cfg = inference.loadInferenceConfig(serviceEnv());
  return { sessions: cfg.INFERENCE_MODEL_SESSIONS, intraOpNumThreads: cfg.INFERENCE_INTRA_OP_THREADS };
}

async function loadModel(modelsDir) {
  const text = fs.readFileSync(path.join(modelsDir, 'yolox_nano.labels.txt'), 'utf8');
  const labels = text.trim().split(/\r?\n/);
  return inference.OnnxModel.load(path.join(modelsDir, 'yolox_nano.onnx'), {
    decoder: 'yolox',
    labels,
    session: sessionSettings(),
  });
}

/** Runs `lanes` loops at once, lane i over `count` items starting at item i; resolves with ms per item. */
async function lanesPerItem(lanes, count, step) {
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      for (let k = 0; k < count; k++) await step(lane, lane + k);
    }),
  );
  return (performance.now() - t0) / (lanes * count);
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
    this.lanes = model.concurrency;
    // Two tensors per lane: one being packed while the other is in the model.
    this.bufs = Array.from({ length: 2 * this.lanes }, () => new Float32Array(3 * this.size * this.size));
    /** Each loop's output array, handed to the model with each run and back (`run`). */
    this.outs = [];
    this.modelTimes = [];
    /** Process CPU time (all threads) per run of each multi-session model round, ms. */
    this.modelCpu = [];
    this.seqTimes = [];
    /** Process CPU time (all threads) per image of each sequential loop, ms. */
    this.seqCpu = [];
    this.perImage = images.map(() => []);
    this.overlapRounds = [];
    /** Process CPU time (all threads) per image of each overlapped loop, ms. */
    this.overlapCpu = [];
  }

  /**
   * One `session.run` for a loop (`lane`): the output comes back in the lane's array, as the service's do
   * (OnnxModel.detect keeps its output arrays). A new 1.2 MB output per run left the bench's process
   * collecting garbage throughout the service measurements that followed (docs/PERFORMANCE.md, "Session settings": output arrays kept).
   */
  async run(lane, tensor, lend = false) {
    const out = await this.model.runRaw(tensor, { lend, into: this.outs[lane] });
    this.outs[lane] = out.data;
    return out;
  }

  async warmUp() {
    this.tensors = [];
    for (const img of this.images)
      this.tensors.push(await tightPrepare(img, this.size, new Float32Array(3 * this.size * this.size)));
    for (const t of this.tensors) await this.run(0, t);
    for (const img of this.images) await this.run(0, await tightPrepare(img, this.size, this.bufs[0]));
  }

  /**
   * `session.run` alone on the prepared tensors: with one session each run timed alone; with several,
   * one loop per session at once over at least 8 runs each, timed as wall time per run (throughput).
   */
  async modelRound() {
    if (this.lanes === 1) {
      for (const t of this.tensors) {
        const t0 = performance.now();
        await this.run(0, t);
        this.modelTimes.push(performance.now() - t0);
      }
      return;
    }
    const n = this.tensors.length;
    const count = Math.max(8, n);
    const cpu0 = process.cpuUsage();
    const per = await lanesPerItem(this.lanes, count, (lane, i) => this.run(lane, this.tensors[i % n]));
    const cpu = process.cpuUsage(cpu0);
    this.modelCpu.push((cpu.user + cpu.system) / 1000 / (this.lanes * count));
    for (let i = 0; i < n; i++) this.modelTimes.push(per);
  }

  async round() {
    const { images, size, bufs } = this;
    await this.modelRound();
    // The pipeline lends its tensor to the model (moved to the session's worker, handed back), as the
    // service does with an image's tensor.
    const seqCpu0 = process.cpuUsage();
    for (let i = 0; i < images.length; i++) {
      const t0 = performance.now();
      bufs[0] = (await this.run(0, await tightPrepare(images[i], size, bufs[0]), true)).lent ?? bufs[0];
      const dt = performance.now() - t0;
      this.seqTimes.push(dt);
      this.perImage[i].push(dt);
    }
    const seqCpu = process.cpuUsage(seqCpu0);
    this.seqCpu.push((seqCpu.user + seqCpu.system) / 1000 / images.length);
    // One overlapped loop per session: lane l runs image i while it packs image i+1.
    const n = images.length;
    const count = this.lanes === 1 ? n : Math.max(8, n);
    const next = [];
    const cpu0 = process.cpuUsage();
    const per = await lanesPerItem(this.lanes, count, async (lane, i) => {
      const k = i - lane;
      const slot = 2 * lane + (k % 2);
      const tensor = await (next[lane] ?? tightPrepare(images[i % n], size, bufs[slot]));
      next[lane] =
        k + 1 < count ? tightPrepare(images[(i + 1) % n], size, bufs[2 * lane + ((k + 1) % 2)]) : undefined;
      bufs[slot] = (await this.run(lane, tensor, true)).lent ?? bufs[slot];
    });
    this.overlapRounds.push(per);
    const cpu = process.cpuUsage(cpu0);
    this.overlapCpu.push((cpu.user + cpu.system) / 1000 / (this.lanes * count));
  }

  /** Medians in ms per image: model, sequential and overlapped (and their CPU time), best pipeline, and per image (sequential). */
  summary() {
    const sequential = median(this.seqTimes);
    const overlapped = median(this.overlapRounds);
    return {
      model: median(this.modelTimes),
      modelCpu: this.modelCpu.length ? median(this.modelCpu) : NaN,
      sequential,
      sequentialCpu: median(this.seqCpu),
      overlapped,
      overlappedCpu: median(this.overlapCpu),
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

/**
 * CPU time of this process's ended and waited-for children (ffmpeg), ms: `cutime` + `cstime` of /proc/self/stat
 * (Linux; NaN elsewhere). Resolution: one clock tick (10 ms).
 */
function childrenCpuMs() {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the command: state is field 3, so cutime (16) and cstime (17) are at 13 and 14.
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

module.exports = {
  childrenCpuMs,
  loadModel,
  serviceEnv,
  sessionSettings,
  tightPrepare,
  RawLimits,
  rawModel,
  report,
  median,
  percentile,
};
