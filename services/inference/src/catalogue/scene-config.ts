import { z } from 'zod';
import { SCENE_CODES, type SceneCode } from '@vision/shared';

/**
 * The scene catalogue configuration: which engine serves each scene, which model classes map to
 * which public labels, and the scene's inference lower bound. A built-in default covers every scene;
 * a JSON file (INFERENCE_SCENES_FILE) may replace any scene's entry.
 */
const lowerBound = z.number().min(0).max(1);
const decoder = z.enum(['yolox', 'yolov8']);

export const modelSceneSchema = z
  .object({
    engine: z.literal('model'),
    /** Model file, relative to VISION_MODELS_DIR unless absolute. */
    model: z.string().min(1),
    /** Labels file (one class per line); defaults to `<model without .onnx>.labels.txt`. */
    labels_file: z.string().min(1).optional(),
    decoder,
    /** Model class name -> public label. Classes not listed are ignored. */
    classes: z.record(z.string().min(1), z.string().min(1)),
    lower_bound: lowerBound,
  })
  .strict();

export const fishingRuleSceneSchema = z
  .object({
    engine: z.literal('rule'),
    rule: z.literal('person-on-boat'),
    model: z.string().min(1),
    labels_file: z.string().min(1).optional(),
    decoder,
    /** Model class names of persons and boats. */
    person_class: z.string().min(1).default('person'),
    boat_class: z.string().min(1).default('boat'),
    /** Score at which persons and boats are considered before the rule applies. */
    component_threshold: lowerBound.default(0.25),
    lower_bound: lowerBound,
  })
  .strict();

export const builtinFireSceneSchema = z
  .object({
    engine: z.literal('builtin'),
    detector: z.literal('fire-colour-motion'),
    /** Defaults to the detector's own calibrated bound (BUILTIN_FIRE_SMOKE_LOWER_BOUND in src/fire). */
    lower_bound: lowerBound.optional(),
  })
  .strict();

export const sceneConfigSchema = z.discriminatedUnion('engine', [
  modelSceneSchema,
  fishingRuleSceneSchema,
  builtinFireSceneSchema,
]);
export type SceneConfig = z.infer<typeof sceneConfigSchema>;
export type ModelSceneConfig = z.infer<typeof modelSceneSchema>;
export type FishingRuleSceneConfig = z.infer<typeof fishingRuleSceneSchema>;

export const scenesFileSchema = z
  .object({
    scenes: z.record(z.enum(SCENE_CODES), sceneConfigSchema),
  })
  .strict();

export const COCO_MODEL = 'yolox_nano.onnx';

/** Built-in default catalogue (docs/MODELS.md, "COCO scenes"). */
export const DEFAULT_SCENES: Record<SceneCode, SceneConfig> = {
  person_vehicle: {
    engine: 'model',
    model: COCO_MODEL,
    decoder: 'yolox',
    classes: {
      person: 'person',
      bicycle: 'bicycle',
      car: 'car',
      motorcycle: 'motorcycle',
      bus: 'bus',
      truck: 'truck',
      train: 'train',
    },
    lower_bound: 0.3,
  },
  ship: { engine: 'model', model: COCO_MODEL, decoder: 'yolox', classes: { boat: 'ship' }, lower_bound: 0.3 },
  cow_sheep: {
    engine: 'model',
    model: COCO_MODEL,
    decoder: 'yolox',
    classes: { cow: 'cattle', sheep: 'sheep' },
    lower_bound: 0.3,
  },
  fishing: {
    engine: 'rule',
    rule: 'person-on-boat',
    model: COCO_MODEL,
    decoder: 'yolox',
    person_class: 'person',
    boat_class: 'boat',
    component_threshold: 0.25,
    lower_bound: 0.3,
  },
  fire_smoke: { engine: 'builtin', detector: 'fire-colour-motion' },
};

/**
 * Our own fire/smoke detector (YOLOX-Nano fine-tuned on firesmoke-train, training/fire_smoke, provenance in
 * models/fire_smoke_yolox_nano.json). Serves fire_smoke by default wherever the file is installed.
 */
export const FIRE_SMOKE_DEFAULT_MODEL = 'fire_smoke_yolox_nano.onnx';
/** Its lower bound, chosen on firesmoke-val by training/fire_smoke/calibrate.py and recorded in its .json (docs/MODELS.md, "fire_smoke"). */
export const FIRE_SMOKE_DEFAULT_LOWER_BOUND = 0.15;

export interface FireModelEnv {
  FIRE_SMOKE_MODEL?: string;
  FIRE_SMOKE_LABELS?: string;
  FIRE_SMOKE_DECODER: 'yolox' | 'yolov8';
  FIRE_SMOKE_LOWER_BOUND?: number;
}

/**
 * Resolves the configured catalogue: defaults, then our own fire/smoke model when it is installed
 * (`defaultFireModel`, its resolved path) and neither the JSON file nor FIRE_SMOKE_MODEL says otherwise,
 * then the JSON file's scenes, then FIRE_SMOKE_MODEL (a configured fire/smoke model replaces the built-in
 * detector). Classes of a fire model whose name contains "fire" or "flame" map to `fire`, "smoke" to `smoke`.
 */
export function resolveSceneConfigs(
  fileScenes: Partial<Record<SceneCode, SceneConfig>> | undefined,
  fire: FireModelEnv,
  fireModelLabels?: string[],
  defaultFireModel?: string,
): Record<SceneCode, SceneConfig> {
  const out: Record<SceneCode, SceneConfig> = { ...DEFAULT_SCENES };
  if (defaultFireModel)
    out.fire_smoke = {
      engine: 'model',
      model: defaultFireModel,
      decoder: 'yolox',
      classes: { fire: 'fire', smoke: 'smoke' },
      lower_bound: fire.FIRE_SMOKE_LOWER_BOUND ?? FIRE_SMOKE_DEFAULT_LOWER_BOUND,
    };
  Object.assign(out, fileScenes ?? {});
  if (fire.FIRE_SMOKE_MODEL) {
    const classes: Record<string, string> = {};
    for (const name of fireModelLabels ?? []) {
      const n = name.toLowerCase();
      if (n.includes('smoke')) classes[name] = 'smoke';
      else if (n.includes('fire') || n.includes('flame')) classes[name] = 'fire';
    }
    out.fire_smoke = {
      engine: 'model',
      model: fire.FIRE_SMOKE_MODEL,
      ...(fire.FIRE_SMOKE_LABELS ? { labels_file: fire.FIRE_SMOKE_LABELS } : {}),
      decoder: fire.FIRE_SMOKE_DECODER,
      classes,
      lower_bound: fire.FIRE_SMOKE_LOWER_BOUND ?? 0.3,
    };
  }
  return out;
}

export function defaultLabelsFile(model: string): string {
  return model.replace(/\.onnx$/i, '') + '.labels.txt';
}
