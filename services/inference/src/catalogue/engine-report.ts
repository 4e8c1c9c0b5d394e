/**
 * What each enabled scene is served by, said where an operator looks: one log line per scene at start, a
 * readiness entry for each scene served by a fallback, and the `vision_scene_engine_info` gauge. A fallback names
 * the file whose absence put it there (relative to VISION_MODELS_DIR, never an absolute path) and its measured
 * quality against the model it stands in for (docs/MODELS.md, "Side by side").
 */
import { type Logger, type ReadinessCheck, type SceneCode, ServiceGauge } from '@vision/shared';

/** Measured quality of a fallback engine, beside the model it stands in for (docs/MODELS.md). */
export interface FallbackQuality {
  /** The model whose absence puts the fallback in its place. */
  model: string;
  box_ap50: number;
  model_box_ap50: number;
  image_precision: number;
  image_recall: number;
}

/** The scenes that have a fallback engine, and its quality (fire box AP50 and image level, dfire-valid). */
export const FALLBACK_QUALITY: Partial<Record<SceneCode, FallbackQuality>> = {
  fire_smoke: {
    model: 'fire_smoke_yolox_nano.onnx',
    box_ap50: 0.05,
    model_box_ap50: 0.55,
    image_precision: 0.93,
    image_recall: 0.56,
  },
};

export interface SceneEngineReport {
  scene_code: SceneCode;
  /** As in the scene list: `onnx:<file>`, `rule:<rule>` or `builtin:<detector>`. */
  engine: string;
  /** The model file it runs, relative to VISION_MODELS_DIR (or its bare name when found elsewhere). */
  model?: string;
  /** Set when the scene is served by its fallback because a file is missing. */
  fallback?: { missing: string; quality: FallbackQuality };
}

const engineInfo = new ServiceGauge(
  'vision_scene_engine_info',
  'The engine each enabled scene is served by (1 per scene), and whether it is a fallback for a missing model',
  ['scene', 'engine', 'fallback'],
);

/** One sentence on a fallback: what serves, what is missing, how much worse it is. */
function fallbackSentence(r: SceneEngineReport): string {
  if (!r.fallback) return `${r.engine}`;
  const q = r.fallback.quality;
  return (
    `served by the fallback ${r.engine}: ${r.fallback.missing} is not in the models directory ` +
    `(box AP50 ${q.box_ap50} against ${q.model_box_ap50} for ${q.model}, docs/MODELS.md)`
  );
}

/** Logs, once, the engine of each enabled scene; a fallback as a warning. */
export function logSceneEngines(reports: readonly SceneEngineReport[], logger: Logger): void {
  for (const r of reports) {
    if (r.fallback)
      logger.warn(
        {
          scene_code: r.scene_code,
          engine: r.engine,
          fallback: true,
          missing: r.fallback.missing,
          quality: r.fallback.quality,
        },
        `scene ${r.scene_code} ${fallbackSentence(r)}`,
      );
    else
      logger.info(
        {
          scene_code: r.scene_code,
          engine: r.engine,
          fallback: false,
          ...(r.model ? { model: r.model } : {}),
        },
        `scene ${r.scene_code} served by ${r.engine}`,
      );
  }
}

/** A readiness entry `<scene>_engine` for each scene served by a fallback: degraded, saying why. */
export function fallbackReadiness(reports: readonly SceneEngineReport[]): Record<string, ReadinessCheck> {
  return Object.fromEntries(
    reports
      .filter((r) => r.fallback)
      .map((r) => [`${r.scene_code}_engine`, () => Promise.resolve({ degraded: fallbackSentence(r) })]),
  );
}

/** Exposes the reports as `vision_scene_engine_info`; returns the function that removes them. */
export function exposeSceneEngines(reports: readonly SceneEngineReport[]): () => void {
  const samples = reports.map(
    (r) =>
      [{ scene: r.scene_code, engine: r.engine, fallback: r.fallback ? 'true' : 'false' }, 1] as [
        { scene: string; engine: string; fallback: string },
        number,
      ],
  );
  return engineInfo.addSource(() => samples);
}
