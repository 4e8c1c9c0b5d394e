import type { SceneCode, SceneStatus } from '@vision/shared';
import { clampBox, unletterbox } from '../bbox';
import type { LabeledDetection, PixelBox, RawDetection } from '../detection-types';
import { packGbrpTensor } from '../model/letterbox';
import { takeTensor } from '../model/tensor-pool';
import type { ClassDetection } from '../model/nms';
import type { OnnxModel } from '../model/onnx-model';
import type { PreparedImage } from '../model/preprocess';
import { fishingRule } from '../rules/fishing';
import type { FireModule, FireVideoDetector } from './fire-loader';
import { contentRgb, type LetterboxedFrame } from './frames';

/** Per-job detector state (the built-in fire detector keeps temporal state; model scenes keep none). */
export interface VideoSceneSession {
  /**
   * How many frames may be in detectFrame at once: for a scene without state, one per model session for a
   * live source and two for a file (a job detects its next frames while the model works on this one); 1 for
   * a scene that keeps state.
   */
  readonly depth: number;
  /**
   * Detects objects in a frame. `frame.planes` is read before this returns, never after: the job writes a
   * later frame into the same buffer (FfmpegFrameSource.recycle).
   */
  detectFrame(frame: LetterboxedFrame, timeMs: number): Promise<LabeledDetection[]>;
}

/** What serves one enabled scene. Every detection it returns is in original-image pixels, has a
 * public label of the scene and a score at or above the scene's lower bound. */
export interface SceneEngine {
  readonly code: SceneCode;
  readonly status: SceneStatus;
  /** Side of the letterboxed canvas frames must be delivered in. */
  readonly inputSize: number;
  /** Whether detectImage needs the full-resolution RGB pixels of the image. */
  readonly needsRgb: boolean;
  detectImage(img: PreparedImage): Promise<LabeledDetection[]>;
  /** A job's detector; `live`: the frames come from a live source (detected as they come, not queued). */
  videoSession(opts: { live: boolean }): VideoSceneSession;
}

/**
 * Frames of a file job in detection at once per model session: one running and one queued in the session's
 * worker, which starts it as soon as the run before ends, without waiting for the event loop to take that
 * output and pack the next frame (docs/PERFORMANCE.md, "Frames": 0.85-0.91 of the raw model's frames per
 * second became 0.86-0.98). A live job keeps one per session: a
 * queued frame waits behind the other streams' frames too, and near capacity that doubled the delay from
 * capture to stored (live bench, p95 975 ms against 284-457 ms).
 */
const FILE_FRAMES_PER_SESSION = 2;

function toOriginal(d: ClassDetection, r: number, w: number, h: number): PixelBox {
  return clampBox(unletterbox(d.box, r), w, h);
}

/**
 * A scene served by a model: runs it on an image's tensor or a job's packed frame, and turns its
 * detections into the scene's (`fromModel`). Either tensor is lent to the model (moved to its worker, not
 * copied, not read again) and kept for reuse when it comes back (tensor-pool.ts): a copy cost about 1.1 ms
 * of main-thread time per frame, a fresh tensor about three times the packing itself.
 */
abstract class ModelBackedEngine implements SceneEngine {
  readonly needsRgb = false;
  constructor(
    readonly code: SceneCode,
    readonly status: SceneStatus,
    protected readonly model: OnnxModel,
  ) {}
  get inputSize(): number {
    return this.model.inputSize;
  }

  /** The model's score threshold for this scene. */
  protected abstract get modelThreshold(): number;
  /** The scene's detections (original-image pixels) from the model's, given the letterbox of the input. */
  protected abstract fromModel(dets: ClassDetection[], r: number, w: number, h: number): LabeledDetection[];

  private async run(tensor: Float32Array, r: number, w: number, h: number) {
    return this.fromModel(await this.model.detect(tensor, this.modelThreshold, { lend: true }), r, w, h);
  }

  detectImage(img: PreparedImage): Promise<LabeledDetection[]> {
    return this.run(img.tensor, img.letterbox.r, img.width, img.height);
  }

  videoSession({ live }: { live: boolean }): VideoSceneSession {
    return {
      depth: this.model.concurrency * (live ? 1 : FILE_FRAMES_PER_SESSION),
      detectFrame: (f) => {
        const s = f.letterbox.size;
        const tensor = packGbrpTensor(f.planes, s, takeTensor(3 * s * s));
        return this.run(tensor, f.letterbox.r, f.width, f.height);
      },
    };
  }
}

/** A scene served directly by a model: model classes mapped to public labels. */
export class ModelSceneEngine extends ModelBackedEngine {
  private readonly classMap: Map<number, string>;
  constructor(code: SceneCode, status: SceneStatus, model: OnnxModel, classes: Record<string, string>) {
    super(code, status, model);
    this.classMap = new Map();
    model.labels.forEach((name, i) => {
      if (classes[name] !== undefined) this.classMap.set(i, classes[name]);
    });
  }

  protected get modelThreshold(): number {
    return this.status.lower_bound;
  }

  protected fromModel(dets: ClassDetection[], r: number, w: number, h: number): LabeledDetection[] {
    const out: LabeledDetection[] = [];
    for (const d of dets) {
      const label = this.classMap.get(d.classIndex);
      if (label !== undefined) out.push({ label, score: d.score, box: toOriginal(d, r, w, h) });
    }
    return out;
  }
}

/** fishing: the person-on-boat rule over a COCO model's detections (rules/fishing.ts). */
export class FishingRuleEngine extends ModelBackedEngine {
  private readonly personIdx: number;
  private readonly boatIdx: number;
  constructor(
    code: SceneCode,
    status: SceneStatus,
    model: OnnxModel,
    personClass: string,
    boatClass: string,
    private readonly componentThreshold: number,
  ) {
    super(code, status, model);
    this.personIdx = model.labels.indexOf(personClass);
    this.boatIdx = model.labels.indexOf(boatClass);
  }

  protected get modelThreshold(): number {
    return Math.min(this.componentThreshold, this.status.lower_bound);
  }

  protected fromModel(dets: ClassDetection[], r: number, w: number, h: number): LabeledDetection[] {
    const persons: LabeledDetection[] = [];
    const boats: LabeledDetection[] = [];
    for (const d of dets) {
      if (d.classIndex === this.personIdx)
        persons.push({ label: 'person', score: d.score, box: toOriginal(d, r, w, h) });
      else if (d.classIndex === this.boatIdx)
        boats.push({ label: 'boat', score: d.score, box: toOriginal(d, r, w, h) });
    }
    return fishingRule(persons, boats).filter((d) => d.score >= this.status.lower_bound);
  }
}

/** fire_smoke without a model: the built-in classical colour-and-motion detector (src/fire/). */
export class BuiltinFireEngine implements SceneEngine {
  readonly needsRgb = true;
  constructor(
    readonly code: SceneCode,
    readonly status: SceneStatus,
    private readonly fire: FireModule,
    readonly inputSize: number,
  ) {}

  private keep(dets: RawDetection[], scale: number, w: number, h: number): LabeledDetection[] {
    return dets
      .filter((d) => d.score >= this.status.lower_bound)
      .map((d) => ({ label: d.label, score: d.score, box: clampBox(unletterbox(d.box, scale), w, h) }));
  }

  async detectImage(img: PreparedImage): Promise<LabeledDetection[]> {
    if (!img.rgb) throw new Error('fire detector needs RGB pixels');
    return this.keep(this.fire.detectFireSmokeImage(img.rgb), 1, img.width, img.height);
  }

  videoSession(): VideoSceneSession {
    const detector: FireVideoDetector = new this.fire.FireSmokeVideoDetector();
    return {
      depth: 1,
      detectFrame: async (f, timeMs) => {
        const { width, height, r } = f.letterbox;
        const dets = detector.push({ data: contentRgb(f), width, height, channels: 3 }, timeMs);
        return this.keep(dets, r, f.width, f.height);
      },
    };
  }
}
