import type { InferenceSession } from 'onnxruntime-node';
import path from 'node:path';
import { metrics } from '@vision/shared';
import { decodeYolov8, decodeYolox, type DecoderKind } from './decoders';
import { nmsClassAware, type ClassDetection } from './nms';
import { SessionPool } from './session-pool';
import type { RawOutput } from './session-worker';
import { giveBackTensor, takeTensor } from './tensor-pool';

export const NMS_IOU = 0.45;

export interface ModelOptions {
  decoder: DecoderKind;
  labels: string[];
  /** Model input side when the model does not declare a fixed one. */
  defaultInputSize?: number;
  session?: SessionSettings;
}

/** How a model is run (INFERENCE_MODEL_SESSIONS, INFERENCE_INTRA_OP_THREADS). */
export interface SessionSettings {
  /** Sessions of the model, each in its own worker thread, running at the same time. Default 1 (the service: 2). */
  sessions?: number;
  /** Intra-op threads of each session. Default: onnxruntime's (one per core). */
  intraOpNumThreads?: number;
}

/**
 * The session settings of every model (docs/PERFORMANCE.md, "Session settings"): all graph optimisations;
 * one run at a time per session (runs are queued in the session's worker), each spread over the
 * intra-op threads (default: one per core); operators of one run executed in order, so no inter-op pool.
 * Idle pool threads sleep instead of spinning: a spinning thread takes a core from the decoding, the
 * request handling and ffmpeg that run beside the model on a small machine.
 */
export function sessionOptions(intraOpNumThreads?: number): InferenceSession.SessionOptions {
  return {
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    ...(intraOpNumThreads ? { intraOpNumThreads } : {}),
    extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
  };
}

/**
 * One model file, shared by every job and request: its onnxruntime sessions live in worker threads
 * (session-pool.ts, session-worker.ts) so that model runs never block the event loop.
 */
export class OnnxModel {
  /** Floats in one output, known after the first detect(): the length of the output arrays it keeps. */
  private outputLength = 0;

  private constructor(
    readonly file: string,
    readonly decoder: DecoderKind,
    readonly labels: string[],
    readonly inputSize: number,
    private readonly session: SessionPool,
    private readonly inputName: string,
    private readonly outputName: string,
  ) {}

  static async load(file: string, opts: ModelOptions): Promise<OnnxModel> {
    const session = await SessionPool.start(
      file,
      sessionOptions(opts.session?.intraOpNumThreads),
      opts.session?.sessions ?? 1,
    );
    const inputName = session.info.inputNames[0];
    const outputName = session.info.outputNames[0];
    let inputSize = opts.defaultInputSize ?? 416;
    const dims = session.info.inputShape;
    if (dims) {
      const h = dims[2];
      const w = dims[3];
      if (typeof h === 'number' && typeof w === 'number') {
        if (h !== w) throw new Error(`model ${file}: only square inputs are supported (got ${w}x${h})`);
        inputSize = h;
      }
    }
    return new OnnxModel(file, opts.decoder, opts.labels, inputSize, session, inputName, outputName);
  }

  /** How many model runs execute at once (the sessions of the pool). */
  get concurrency(): number {
    return this.session.size;
  }

  /**
   * Runs the model alone on a prepared 1x3xSxS tensor and returns the raw output. The tensor is copied
   * to the session's worker before this returns, so the caller may refill it at once (live frames do);
   * with `lend` it is moved there instead (no copy), left empty, and handed back as the output's `lent`.
   * `into`: an array for the output (moved to the worker, it comes back as `data` when its length fits).
   */
  async runRaw(tensor: Float32Array, opts: { lend?: boolean; into?: Float32Array } = {}): Promise<RawOutput> {
    const s = this.inputSize;
    const started = process.hrtime.bigint();
    const dims = [1, 3, s, s];
    const out = await this.session.run(this.inputName, this.outputName, tensor, dims, opts.lend, opts.into);
    metrics.modelLatency.observe(
      { model: path.basename(this.file) },
      Number(process.hrtime.bigint() - started) / 1e9,
    );
    return out;
  }

  /**
   * Detections in letterboxed input pixels, score >= scoreThreshold, after class-aware NMS. Copies or lends
   * `tensor` as runRaw does; a lent tensor is not handed back to the caller but kept for the next image
   * (tensor-pool.ts), and so is the output's array.
   */
  async detect(
    tensor: Float32Array,
    scoreThreshold: number,
    opts: { lend?: boolean } = {},
  ): Promise<ClassDetection[]> {
    // The output comes back in a kept array too, handed back once decoded (the decoders copy what they keep).
    const into = this.outputLength > 0 ? takeTensor(this.outputLength) : undefined;
    const { data, dims, lent } = await this.runRaw(tensor, { ...opts, into });
    if (lent) giveBackTensor(lent);
    this.outputLength = data.length;
    const nc = this.labels.length;
    try {
      const raw =
        this.decoder === 'yolox'
          ? decodeYolox(data, this.inputSize, nc, scoreThreshold)
          : decodeYolov8(data, dims[dims.length - 1], nc, scoreThreshold);
      return nmsClassAware(raw, NMS_IOU);
    } finally {
      giveBackTensor(data);
    }
  }

  async close(): Promise<void> {
    await this.session.close();
  }
}

/** Reads a labels file: one class name per line, line N = class index N-1; blank trailing lines ignored. */
export function parseLabels(text: string): string[] {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}
