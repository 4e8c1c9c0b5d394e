import * as ort from 'onnxruntime-node';
import path from 'node:path';
import { metrics } from '@vision/shared';
import { decodeYolov8, decodeYolox, type DecoderKind } from './decoders';
import { nmsClassAware, type ClassDetection } from './nms';

export const NMS_IOU = 0.45;

export interface ModelOptions {
  decoder: DecoderKind;
  labels: string[];
  /** Model input side when the model does not declare a fixed one. */
  defaultInputSize?: number;
  intraOpNumThreads?: number;
}

/**
 * One onnxruntime session for one model file, shared by every job and request (onnxruntime allows
 * concurrent `run` calls on one session).
 */
export class OnnxModel {
  private constructor(
    readonly file: string,
    readonly decoder: DecoderKind,
    readonly labels: string[],
    readonly inputSize: number,
    private readonly session: ort.InferenceSession,
    private readonly inputName: string,
    private readonly outputName: string,
  ) {}

  static async load(file: string, opts: ModelOptions): Promise<OnnxModel> {
    const session = await ort.InferenceSession.create(file, {
      graphOptimizationLevel: 'all',
      ...(opts.intraOpNumThreads ? { intraOpNumThreads: opts.intraOpNumThreads } : {}),
    });
    const inputName = session.inputNames[0];
    const outputName = session.outputNames[0];
    const meta = session.inputMetadata?.[0];
    let inputSize = opts.defaultInputSize ?? 416;
    if (meta && meta.isTensor) {
      const dims = meta.shape;
      const h = dims[2];
      const w = dims[3];
      if (typeof h === 'number' && typeof w === 'number') {
        if (h !== w) throw new Error(`model ${file}: only square inputs are supported (got ${w}x${h})`);
        inputSize = h;
      }
    }
    return new OnnxModel(file, opts.decoder, opts.labels, inputSize, session, inputName, outputName);
  }

  /** Runs the session alone on a prepared 1x3xSxS tensor and returns the raw output. */
  async runRaw(tensor: Float32Array): Promise<{ data: Float32Array; dims: readonly number[] }> {
    const s = this.inputSize;
    const input = new ort.Tensor('float32', tensor, [1, 3, s, s]);
    const started = process.hrtime.bigint();
    const out = await this.session.run({ [this.inputName]: input });
    metrics.modelLatency.observe(
      { model: path.basename(this.file) },
      Number(process.hrtime.bigint() - started) / 1e9,
    );
    const t = out[this.outputName];
    const data = t.data as Float32Array;
    const dims = t.dims;
    input.dispose?.();
    return { data, dims };
  }

  /** Detections in letterboxed input pixels, score >= scoreThreshold, after class-aware NMS. */
  async detect(tensor: Float32Array, scoreThreshold: number): Promise<ClassDetection[]> {
    const { data, dims } = await this.runRaw(tensor);
    const nc = this.labels.length;
    const raw =
      this.decoder === 'yolox'
        ? decodeYolox(data, this.inputSize, nc, scoreThreshold)
        : decodeYolov8(data, dims[dims.length - 1], nc, scoreThreshold);
    return nmsClassAware(raw, NMS_IOU);
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}

/** Reads a labels file: one class name per line, line N = class index N-1; blank trailing lines ignored. */
export function parseLabels(text: string): string[] {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}
