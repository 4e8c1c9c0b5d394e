/**
 * Our fire/smoke model (models/fire_smoke_yolox_nano.onnx, training/fire_smoke) measured through the
 * public image endpoint on the held-out ../shared/datasets/dfire-valid (300 images, 502 fire boxes),
 * with the same code as `node scripts/eval-fire-service.js`. The figures must not drop below those
 * reported in docs/MODELS.md ("fire_smoke"), rounded down to two decimals. Scored on what a caller
 * receives: `fire` objects at or above the scene's lower bound. Runs on the standalone stack only: the
 * figures do not depend on the deployment, and 300 images twice would double its time.
 */
import path from 'node:path';
import { standaloneOnly } from '../helpers/composition';
import { startStack, SHARED_DIR, type TestStack } from '../helpers/stack';

interface Box {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}
interface FireRecord {
  gts: Box[];
  fire: { box: Box; score: number }[];
}
interface Scores {
  precision: number;
  recall: number;
  ap50: number;
  gtBoxes: number;
  images: number;
}
interface EvalService {
  detectThroughService(o: {
    url: string;
    key: string;
    sharedDir: string;
  }): Promise<{ scene: { engine: string; lower_bound: number }; records: FireRecord[] }>;
}
interface FireMetrics {
  evaluate(records: FireRecord[], scoreOf: (c: { score: number }) => number, lowerBound: number): Scores;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const service = require('../../scripts/eval-fire-service') as EvalService;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const metrics = require('../../scripts/fire-metrics') as FireMetrics;

const KEY = 'e2e-fire-model-0123456789';
const MIN_AP50 = 0.55;
const MIN_PRECISION = 0.92;
const MIN_RECALL = 0.97;
const EPS = 1e-9;

// The model's quality is the inference service's, whichever composition calls it.
const describeStandalone = standaloneOnly(
  'the model and its scoring are the same in both compositions',
).describe;

describeStandalone('fire_smoke model on dfire-valid through the image endpoint', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ keys: `${KEY}:fire-eval`, env: { QUOTA_IMAGE_DAILY: '1000' } });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  it(`keeps fire AP50 >= ${MIN_AP50}, image P >= ${MIN_PRECISION} and R >= ${MIN_RECALL} at the scene lower bound`, async () => {
    const { scene, records } = await service.detectThroughService({
      url: stack.url,
      key: KEY,
      sharedDir: path.resolve(SHARED_DIR),
    });
    expect(scene.engine).toBe('onnx:fire_smoke_yolox_nano.onnx');
    const r = metrics.evaluate(records, (c) => c.score, scene.lower_bound);
    expect(r.images).toBe(300);
    expect(r.gtBoxes).toBe(502);
    expect(r.ap50).toBeGreaterThanOrEqual(MIN_AP50 - EPS);
    expect(r.precision).toBeGreaterThanOrEqual(MIN_PRECISION - EPS);
    expect(r.recall).toBeGreaterThanOrEqual(MIN_RECALL - EPS);
  }, 300_000);
});
