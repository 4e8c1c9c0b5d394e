import { promises as fs } from 'node:fs';
import path from 'node:path';
import { SCENE_CODES, type Logger, type SceneCode, type SceneStatus } from '@vision/shared';
import { OnnxModel, parseLabels, type SessionSettings } from '../model/onnx-model';
import type { DecoderKind } from '../model/decoders';
import { BuiltinFireEngine, FishingRuleEngine, ModelSceneEngine, type SceneEngine } from '../scenes/engines';
import { loadFireModule, type FireModuleLoad } from '../scenes/fire-loader';
import { FALLBACK_QUALITY, type SceneEngineReport } from './engine-report';
import {
  defaultLabelsFile,
  FIRE_SMOKE_DEFAULT_MODEL,
  resolveSceneConfigs,
  scenesFileSchema,
  type FireModelEnv,
  type SceneConfig,
} from './scene-config';

/** The repository's own models (models/ at the repo root), looked in after VISION_MODELS_DIR. */
export const BUNDLED_MODELS_DIR = path.resolve(__dirname, '../../../../models');

export interface CatalogueOptions {
  modelsDir: string;
  /** Where our own fire/smoke model is looked for after modelsDir; null: nowhere else. Default BUNDLED_MODELS_DIR. */
  bundledModelsDir?: string | null;
  scenesFile?: string;
  fire: FireModelEnv;
  logger?: Logger;
  /** Injected for tests; defaults to requiring src/fire. */
  loadFire?: () => FireModuleLoad;
  /** Canvas side used for video frames of the built-in fire detector. */
  builtinInputSize?: number;
  /** How every model is run (sessions, threads). */
  session?: SessionSettings;
}

export class CatalogueConfigError extends Error {}

async function exists(file: string): Promise<boolean> {
  try {
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

/**
 * The scene catalogue at run time: one loaded engine per enabled scene and a status for every scene.
 * Models are loaded once per (file, decoder) and shared by all scenes, jobs and requests.
 */
export class SceneCatalogue {
  private constructor(
    private readonly engines: Map<SceneCode, SceneEngine>,
    private readonly statusList: SceneStatus[],
    private readonly loadedModels: OnnxModel[],
    private readonly reports: SceneEngineReport[],
  ) {}

  static async load(opts: CatalogueOptions): Promise<SceneCatalogue> {
    const fileScenes = opts.scenesFile ? await readScenesFile(opts.scenesFile) : undefined;
    const resolveModelPath = (p: string) => (path.isAbsolute(p) ? p : path.resolve(opts.modelsDir, p));

    let fireLabels: string[] | undefined;
    if (opts.fire.FIRE_SMOKE_MODEL) {
      const lf = resolveModelPath(
        opts.fire.FIRE_SMOKE_LABELS ?? defaultLabelsFile(opts.fire.FIRE_SMOKE_MODEL),
      );
      fireLabels = (await exists(lf)) ? parseLabels(await fs.readFile(lf, 'utf8')) : undefined;
    }
    const defaultFireModel = opts.fire.FIRE_SMOKE_MODEL ? undefined : await findDefaultFireModel(opts);
    const configs = resolveSceneConfigs(fileScenes, opts.fire, fireLabels, defaultFireModel);
    // fire_smoke falls back to the built-in detector when our model is missing and nothing else was configured.
    const fireFallback =
      !opts.fire.FIRE_SMOKE_MODEL && !fileScenes?.fire_smoke && defaultFireModel === undefined
        ? await missingDefaultFireFile(opts.modelsDir)
        : undefined;

    const modelCache = new Map<string, Promise<OnnxModel>>();
    const getModel = (file: string, labels: string[], decoder: DecoderKind) => {
      const key = `${file}\0${decoder}`;
      let m = modelCache.get(key);
      if (!m) {
        m = OnnxModel.load(file, { decoder, labels, session: opts.session });
        modelCache.set(key, m);
      }
      return m;
    };

    const engines = new Map<SceneCode, SceneEngine>();
    const statuses: SceneStatus[] = [];
    const reports: SceneEngineReport[] = [];
    for (const code of SCENE_CODES) {
      const cfg = configs[code];
      const { engine, status } = await buildScene(code, cfg, {
        resolveModelPath,
        getModel,
        loadFire: opts.loadFire ?? loadFireModule,
        builtinInputSize: opts.builtinInputSize ?? 416,
      });
      if (engine) engines.set(code, engine);
      else opts.logger?.warn({ scene_code: code, reason: status.reason }, 'scene disabled');
      statuses.push(status);
      if (!engine) continue;
      const quality = FALLBACK_QUALITY[code];
      reports.push({
        scene_code: code,
        engine: status.engine,
        ...(cfg.engine === 'builtin'
          ? {}
          : { model: shownPath(opts.modelsDir, resolveModelPath(cfg.model)) }),
        ...(code === 'fire_smoke' && fireFallback && quality
          ? { fallback: { missing: fireFallback, quality } }
          : {}),
      });
    }
    const models = await Promise.all([...modelCache.values()].map((p) => p.catch(() => undefined)));
    return new SceneCatalogue(
      engines,
      statuses,
      models.filter((m): m is OnnxModel => m !== undefined),
      reports,
    );
  }

  /** What each enabled scene is served by (engine-report.ts). */
  engineReports(): SceneEngineReport[] {
    return this.reports.map((r) => ({ ...r }));
  }

  /** The engine of an enabled scene. */
  engine(code: SceneCode): SceneEngine | undefined {
    return this.engines.get(code);
  }

  statuses(): SceneStatus[] {
    return this.statusList.map((s) => ({ ...s, labels: [...s.labels] }));
  }

  status(code: SceneCode): SceneStatus | undefined {
    return this.statusList.find((s) => s.scene_code === code);
  }

  models(): OnnxModel[] {
    return [...this.loadedModels];
  }

  async close(): Promise<void> {
    await Promise.all(this.loadedModels.map((m) => m.close().catch(() => undefined)));
  }
}

/** Our own fire/smoke model, with its labels file, in the models directory or else the bundled one. */
async function findDefaultFireModel(opts: CatalogueOptions): Promise<string | undefined> {
  const bundled = opts.bundledModelsDir === undefined ? BUNDLED_MODELS_DIR : opts.bundledModelsDir;
  for (const dir of bundled === null ? [opts.modelsDir] : [opts.modelsDir, bundled]) {
    const file = path.resolve(dir, FIRE_SMOKE_DEFAULT_MODEL);
    if ((await exists(file)) && (await exists(defaultLabelsFile(file)))) return file;
  }
  return undefined;
}

/** Which file of our fire model is missing from the models directory (a name relative to it). */
async function missingDefaultFireFile(modelsDir: string): Promise<string> {
  const model = path.resolve(modelsDir, FIRE_SMOKE_DEFAULT_MODEL);
  return (await exists(model)) ? defaultLabelsFile(FIRE_SMOKE_DEFAULT_MODEL) : FIRE_SMOKE_DEFAULT_MODEL;
}

/** A model file as an operator may be shown it: relative to the models directory, else its bare name. */
function shownPath(modelsDir: string, file: string): string {
  const rel = path.relative(path.resolve(modelsDir), file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : path.basename(file);
}

async function readScenesFile(file: string): Promise<Partial<Record<SceneCode, SceneConfig>>> {
  let raw: unknown;
  try {
    raw = JSON.parse(await fs.readFile(file, 'utf8'));
  } catch (err) {
    throw new CatalogueConfigError(`INFERENCE_SCENES_FILE ${file}: ${(err as Error).message}`);
  }
  const parsed = scenesFileSchema.safeParse(raw);
  if (!parsed.success)
    throw new CatalogueConfigError(
      `INFERENCE_SCENES_FILE ${file}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return parsed.data.scenes;
}

interface BuildContext {
  resolveModelPath(p: string): string;
  getModel(file: string, labels: string[], decoder: DecoderKind): Promise<OnnxModel>;
  loadFire(): FireModuleLoad;
  builtinInputSize: number;
}

async function buildScene(
  code: SceneCode,
  cfg: SceneConfig,
  ctx: BuildContext,
): Promise<{ engine?: SceneEngine; status: SceneStatus }> {
  if (cfg.engine === 'builtin') {
    const fire = ctx.loadFire();
    const status: SceneStatus = {
      scene_code: code,
      enabled: false,
      engine: `builtin:${cfg.detector}`,
      labels: ['fire', 'smoke'],
      lower_bound:
        cfg.lower_bound ?? (fire.ok ? fire.module.BUILTIN_FIRE_SMOKE_LOWER_BOUND : undefined) ?? 0.5,
    };
    if (!fire.ok) return { status: { ...status, reason: fire.reason } };
    status.enabled = true;
    return { engine: new BuiltinFireEngine(code, status, fire.module, ctx.builtinInputSize), status };
  }

  const modelName = path.basename(cfg.model);
  const engineName = cfg.engine === 'rule' ? `rule:${cfg.rule}` : `onnx:${modelName}`;
  const labelsPublic = cfg.engine === 'rule' ? ['fishing'] : [...new Set(Object.values(cfg.classes))];
  const base: SceneStatus = {
    scene_code: code,
    enabled: false,
    engine: engineName,
    labels: labelsPublic,
    lower_bound: cfg.lower_bound,
  };
  const modelFile = ctx.resolveModelPath(cfg.model);
  const labelsFile = ctx.resolveModelPath(cfg.labels_file ?? defaultLabelsFile(cfg.model));
  if (!(await exists(modelFile)))
    return { status: { ...base, reason: `model file ${modelName} is not installed` } };
  if (!(await exists(labelsFile)))
    return { status: { ...base, reason: `labels file ${path.basename(labelsFile)} is not installed` } };
  const labels = parseLabels(await fs.readFile(labelsFile, 'utf8'));
  let model: OnnxModel;
  try {
    model = await ctx.getModel(modelFile, labels, cfg.decoder);
  } catch (err) {
    return { status: { ...base, reason: `model ${modelName} failed to load: ${(err as Error).message}` } };
  }
  const status: SceneStatus = { ...base, enabled: true };
  if (cfg.engine === 'rule') {
    if (!labels.includes(cfg.person_class) || !labels.includes(cfg.boat_class))
      return {
        status: { ...base, reason: `model ${modelName} has no ${cfg.person_class}/${cfg.boat_class} class` },
      };
    return {
      engine: new FishingRuleEngine(
        code,
        status,
        model,
        cfg.person_class,
        cfg.boat_class,
        cfg.component_threshold,
      ),
      status,
    };
  }
  const known = Object.keys(cfg.classes).filter((c) => labels.includes(c));
  if (known.length === 0)
    return { status: { ...base, reason: `model ${modelName} has none of the scene's classes` } };
  return { engine: new ModelSceneEngine(code, status, model, cfg.classes), status };
}
