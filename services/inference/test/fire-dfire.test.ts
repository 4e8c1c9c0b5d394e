/**
 * Regression guard for the built-in fire detector on ../shared/datasets/dfire-valid (all 300 images):
 * image-level fire precision and recall at the scene lower bound must not drop below the values
 * measured with scripts/eval-fire.js (P 0.926, R 0.560), rounded down to two decimals. The detector
 * is deterministic; the tiny epsilon only absorbs floating-point representation.
 */
import fs from 'fs';
import path from 'path';
import { BUILTIN_FIRE_SMOKE_LOWER_BOUND, detectFireSmokeImage } from '../src/fire';
import { decodeRgb, dfireDir } from './fire-helpers';

interface Coco {
  images: { id: number; file_name: string }[];
  annotations: { image_id: number; category_id: number }[];
}

const MIN_PRECISION = 0.92;
const MIN_RECALL = 0.56;
const EPS = 1e-9;

describe('dfire-valid image-level fire precision/recall', () => {
  it(`stays at or above P ${MIN_PRECISION} / R ${MIN_RECALL} at lower bound ${BUILTIN_FIRE_SMOKE_LOWER_BOUND}`, async () => {
    const coco = JSON.parse(fs.readFileSync(path.join(dfireDir, 'annotations.json'), 'utf8')) as Coco;
    const positives = new Set(coco.annotations.filter((a) => a.category_id === 1).map((a) => a.image_id));
    expect(coco.images).toHaveLength(300);
    let tp = 0;
    let fp = 0;
    let fn = 0;
    for (const im of coco.images) {
      const img = await decodeRgb(path.join(dfireDir, 'images', im.file_name));
      const predicted = detectFireSmokeImage(img).some(
        (d) => d.label === 'fire' && d.score >= BUILTIN_FIRE_SMOKE_LOWER_BOUND,
      );
      const positive = positives.has(im.id);
      if (predicted && positive) tp++;
      else if (predicted) fp++;
      else if (positive) fn++;
    }
    const precision = tp / (tp + fp);
    const recall = tp / (tp + fn);
    expect(precision).toBeGreaterThanOrEqual(MIN_PRECISION - EPS);
    expect(recall).toBeGreaterThanOrEqual(MIN_RECALL - EPS);
  }, 120_000);
});
