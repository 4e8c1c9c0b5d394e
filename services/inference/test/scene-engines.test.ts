/** @jest-environment ./services/inference/test/support/onnx-environment.js */
/**
 * The service says what it runs: started with a models directory that lacks our fire model, it logs once per
 * scene the engine serving it, and for fire_smoke the fallback, the missing file (relative to the models
 * directory) and the fallback's measured quality; /readyz shows the fallback as degraded, and
 * vision_scene_engine_info labels each scene's engine.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import request from 'supertest';
import { createLogger, DirectoryObjectStore, InProcessBus, metricsRegistry } from '@vision/shared';
import { FALLBACK_QUALITY } from '../src/catalogue/engine-report';
import { createInference, loadInferenceConfig, type InferenceParts } from '../src/index';
import { identityDir } from '../../../test/helpers/identity';
import { MODELS_DIR } from './support/helpers';

interface LogLine {
  msg: string;
  level: number;
  scene_code?: string;
  engine?: string;
  fallback?: boolean;
  missing?: string;
  model?: string;
  quality?: { box_ap50: number; model_box_ap50: number };
}

const lines: string[] = [];
let parts: InferenceParts;
let bus: InProcessBus;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'inference-engines-'));
  const models = path.join(dir, 'models');
  // The COCO model only: our fire model is neither here nor looked for anywhere else.
  mkdirSync(models);
  for (const f of ['yolox_nano.onnx', 'yolox_nano.labels.txt'])
    symlinkSync(path.join(MODELS_DIR, f), path.join(models, f));
  const cfg = loadInferenceConfig({
    VISION_MODELS_DIR: models,
    VISION_IDENTITY_DIR: identityDir(),
    VISION_DATA_DIR: dir,
    INFERENCE_MODEL_SESSIONS: '1',
  });
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger('inference', { level: 'info', destination: sink });
  bus = new InProcessBus({ logger });
  const objectStore = new DirectoryObjectStore(path.join(dir, 'objects'));
  parts = await createInference({ cfg, bus, objectStore, logger, bundledModelsDir: null });
}, 60_000);

afterAll(async () => {
  await parts?.close();
  await bus?.close();
  rmSync(dir, { recursive: true, force: true });
});

const logged = (): LogLine[] => lines.map((l) => JSON.parse(l) as LogLine);

describe('the engine each scene is served by', () => {
  it('is logged once per scene; the fallback with the missing file and its measured quality', () => {
    const engines = logged().filter((l) => l.engine !== undefined && l.fallback !== undefined);
    expect(engines.map((l) => l.scene_code).sort()).toEqual([
      'cow_sheep',
      'fire_smoke',
      'fishing',
      'person_vehicle',
      'ship',
    ]);
    expect(engines.find((l) => l.scene_code === 'person_vehicle')).toMatchObject({
      engine: 'onnx:yolox_nano.onnx',
      fallback: false,
      model: 'yolox_nano.onnx',
    });
    const fire = engines.find((l) => l.scene_code === 'fire_smoke');
    expect(fire).toMatchObject({
      level: 40,
      engine: 'builtin:fire-colour-motion',
      fallback: true,
      missing: 'fire_smoke_yolox_nano.onnx',
      quality: { box_ap50: 0.05, model_box_ap50: 0.55 },
    });
    expect(fire?.msg).toContain('box AP50 0.05 against 0.55');
    // Never an absolute internal path.
    for (const l of lines.filter((x) => x.includes('"engine"'))) expect(l).not.toContain(dir);
  });

  it('shows the fallback in /readyz, degraded', async () => {
    const res = await request(parts.app).get('/readyz');
    expect(res.status).toBe(200);
    const entry = (res.body as { dependencies: Record<string, { status: string; error?: string }> })
      .dependencies.fire_smoke_engine;
    expect(entry.status).toBe('degraded');
    expect(entry.error).toContain('builtin:fire-colour-motion');
    expect(entry.error).toContain('fire_smoke_yolox_nano.onnx');
    expect(entry.error).toContain('box AP50 0.05 against 0.55');
    expect(entry.error).not.toContain(dir);
    expect(res.body.dependencies.person_vehicle_engine).toBeUndefined();
  });

  it('labels each scene in vision_scene_engine_info', async () => {
    const text = await metricsRegistry.metrics();
    const samples = text.split('\n').filter((l) => l.startsWith('vision_scene_engine_info{'));
    const sample = (scene: string) => samples.find((l) => l.includes(`scene="${scene}"`));
    expect(sample('fire_smoke')).toMatch(/engine="builtin:fire-colour-motion",fallback="true"} 1$/);
    expect(sample('person_vehicle')).toMatch(/engine="onnx:yolox_nano.onnx",fallback="false"} 1$/);
  });

  it('docs/MODELS.md gives the figures the service logs, and docs/OPERATIONS.md lists the gauge', () => {
    const docs = path.resolve(__dirname, '../../../docs');
    const models = readFileSync(path.join(docs, 'MODELS.md'), 'utf8');
    const q = FALLBACK_QUALITY.fire_smoke!;
    const row = models.split('\n').find((l) => l.startsWith('| `fire_smoke` (fallback) |')) ?? '';
    expect(row).toContain(`AP50 ${q.box_ap50.toFixed(2)}`);
    expect(row).toContain(`precision ${q.image_precision}, recall ${q.image_recall}`);
    expect(models.replace(/\s+/g, ' ')).toContain(
      `box AP50 ${q.box_ap50} against ${q.model_box_ap50} for the model`,
    );
    const ops = readFileSync(path.join(docs, 'OPERATIONS.md'), 'utf8');
    expect(ops).toMatch(/^\| `vision_scene_engine_info` \| gauge \| `scene`, `engine`, `fallback` \|/m);
  });
});
