/** @jest-environment ./services/inference/test/support/onnx-environment.js */
import type { DetectedObject, SceneCode } from '@vision/shared';
import { SceneCatalogue } from '../src/catalogue/catalogue';
import { detectImages, type ImageResult } from '../src/detect/detect-images';
import { PixelBudget } from '../src/detect/pixel-budget';
import { pngDeclaring } from '../../../test/helpers/png-pad';
import { IMAGES_DIR, MODELS_DIR, image } from './support/helpers';
import { readdirSync } from 'node:fs';

let catalogue: SceneCatalogue;
beforeAll(async () => {
  catalogue = await SceneCatalogue.load({ modelsDir: MODELS_DIR, fire: { FIRE_SMOKE_DECODER: 'yolov8' } });
});
afterAll(() => catalogue.close());

async function detect(scene: SceneCode, names: string[]): Promise<ImageResult[]> {
  const engine = catalogue.engine(scene);
  if (!engine) throw new Error(`${scene} disabled`);
  return detectImages(
    engine,
    names.map((n) => ({ ok: true as const, data: image(n) })),
    { maxPixels: 40e6 },
  );
}

function objectsOf(r: ImageResult): DetectedObject[] {
  if (r.status !== 'succeeded') throw new Error(`failed: ${r.reason}`);
  return r.objects;
}
const labels = (objs: DetectedObject[]) => objs.map((o) => o.label);

function expectInUnitBox(objs: DetectedObject[]) {
  for (const o of objs) {
    expect(o.bbox.format).toBe('cxcywh_normalized');
    for (const v of [o.bbox.cx, o.bbox.cy, o.bbox.width, o.bbox.height]) {
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThanOrEqual(1);
    }
    expect(o.bbox.cx - o.bbox.width / 2).toBeGreaterThanOrEqual(-1e-6);
    expect(o.bbox.cx + o.bbox.width / 2).toBeLessThanOrEqual(1 + 1e-6);
    expect(o.bbox.cy + o.bbox.height / 2).toBeLessThanOrEqual(1 + 1e-6);
    expect((o as { track_id?: string }).track_id).toBeUndefined();
  }
}

/** IoU of a cxcywh_normalized box with a hand-marked pixel box. */
function iouWithMarked(o: DetectedObject, w: number, h: number, m: [number, number, number, number]): number {
  const x1 = (o.bbox.cx - o.bbox.width / 2) * w;
  const x2 = (o.bbox.cx + o.bbox.width / 2) * w;
  const y1 = (o.bbox.cy - o.bbox.height / 2) * h;
  const y2 = (o.bbox.cy + o.bbox.height / 2) * h;
  const iw = Math.max(0, Math.min(x2, m[2]) - Math.max(x1, m[0]));
  const ih = Math.max(0, Math.min(y2, m[3]) - Math.max(y1, m[1]));
  const inter = iw * ih;
  return inter / ((x2 - x1) * (y2 - y1) + (m[2] - m[0]) * (m[3] - m[1]) - inter);
}

describe('COCO scenes on ../shared/media/images', () => {
  it('person_vehicle: street images yield persons and a bus or car, boxes in [0,1]', async () => {
    const names = [
      'street_bus_pedestrians_coco2006.jpg',
      'street_doubledecker_bus_coco1584.jpg',
      'street_people_car_coco9891.jpg',
    ];
    const res = await detect('person_vehicle', names);
    for (const r of res) {
      const objs = objectsOf(r);
      expectInUnitBox(objs);
      expect(labels(objs)).toContain('person');
      expect(labels(objs).some((l) => l === 'bus' || l === 'car')).toBe(true);
      for (const o of objs) expect(o.score).toBeGreaterThanOrEqual(0.3);
    }
    expect(labels(objectsOf(res[2]))).toContain('car');
  });

  it('the bus box lands on the bus (hand-marked box, IoU >= 0.8)', async () => {
    const [r] = await detect('person_vehicle', ['street_bus_pedestrians_coco2006.jpg']);
    if (r.status !== 'succeeded') throw new Error('failed');
    expect(r.image).toEqual({ width: 640, height: 480 });
    const bus = r.objects.find((o) => o.label === 'bus');
    expect(bus).toBeDefined();
    // Marked by eye on the 640x480 image: the purple bus from its left side to its right mirror.
    expect(iouWithMarked(bus as DetectedObject, 640, 480, [45, 82, 607, 425])).toBeGreaterThanOrEqual(0.8);
    // The pedestrian at the left edge, roughly x 5-50, y 250-360.
    const walker = r.objects.find((o) => o.label === 'person' && o.bbox.cx < 0.1);
    expect(walker).toBeDefined();
    expect(iouWithMarked(walker as DetectedObject, 640, 480, [5, 250, 50, 360])).toBeGreaterThanOrEqual(0.5);
  });

  it('ship: boat images yield a ship', async () => {
    const res = await detect('ship', ['boat_sailboat_kodim06.png', 'boat_pier_kodim11.png']);
    for (const r of res) {
      const objs = objectsOf(r);
      expectInUnitBox(objs);
      expect(labels(objs)).toContain('ship');
      expect(new Set(labels(objs))).toEqual(new Set(['ship']));
    }
  });

  it('cow_sheep: sheep and the cropped cattle image', async () => {
    const [sheep, cattle] = await detect('cow_sheep', ['sheep_coco5992.jpg', 'cattle_cameratrap_crop.jpg']);
    expect(labels(objectsOf(sheep)).filter((l) => l === 'sheep').length).toBeGreaterThanOrEqual(3);
    expect(labels(objectsOf(cattle)).filter((l) => l === 'cattle').length).toBeGreaterThanOrEqual(1);
    expectInUnitBox([...objectsOf(sheep), ...objectsOf(cattle)]);
  });

  it('fishing: the people-in-a-boat stand-in yields a fishing box covering the boat; a street does not', async () => {
    const [raft, street, boat] = await detect('fishing', [
      'fishing_standin_people_in_boat_kodim14.png',
      'street_bus_pedestrians_coco2006.jpg',
      'boat_pier_kodim11.png',
    ]);
    expect(labels(objectsOf(raft))).toEqual(['fishing']);
    expect(objectsOf(street)).toEqual([]);
    expect(objectsOf(boat)).toEqual([]);
  });

  it('none_* images yield nothing above 0.8 in any COCO scene', async () => {
    const nones = readdirSync(IMAGES_DIR).filter((n) => n.startsWith('none_'));
    expect(nones.length).toBeGreaterThanOrEqual(3);
    for (const scene of ['person_vehicle', 'ship', 'cow_sheep', 'fishing'] as SceneCode[]) {
      for (const r of await detect(scene, nones)) {
        expect(objectsOf(r).filter((o) => o.score > 0.8)).toEqual([]);
      }
    }
  });

  it('a broken image fails alone, in input order', async () => {
    const engine = catalogue.engine('ship');
    if (!engine) throw new Error('disabled');
    const res = await detectImages(
      engine,
      [
        { ok: true, data: Buffer.from('not an image at all') },
        { ok: true, data: image('boat_sailboat_kodim06.png') },
        { ok: false, reason: 'file too large' },
      ],
      { maxPixels: 40e6 },
    );
    expect(res.map((r) => [r.seq, r.status])).toEqual([
      [0, 'failed'],
      [1, 'succeeded'],
      [2, 'failed'],
    ]);
  });

  it('refuses an image over the pixel limit (decompression bomb guard)', async () => {
    const engine = catalogue.engine('ship');
    if (!engine) throw new Error('disabled');
    const boat = image('boat_sailboat_kodim06.png'); // 768 x 512
    // Under 100 bytes that declare 30000 x 30000 (900 Mpx, 2.7 GB of RGB once decoded), beside a real image.
    const bomb = pngDeclaring(30_000, 30_000);
    expect(bomb.length).toBeLessThan(100);
    const budget = new PixelBudget(80_000_000);
    const acquire = jest.spyOn(budget, 'acquire');
    const run = jest.spyOn(engine, 'detectImage');
    try {
      const res = await detectImages(
        engine,
        [
          { ok: true, data: bomb },
          { ok: true, data: boat },
        ],
        { maxPixels: 40e6, budget },
      );
      expect(res[0]).toEqual({ seq: 0, status: 'failed', reason: 'image exceeds the pixel limit' });
      expect(res[1]).toMatchObject({ seq: 1, status: 'succeeded', image: { width: 768, height: 512 } });
      // Refused from its header: no share of the decode budget asked for it, the model ran for the boat only.
      expect(acquire.mock.calls).toEqual([[768 * 512]]);
      expect(run).toHaveBeenCalledTimes(1);
      expect(budget.usage()).toEqual({ inUse: 0, waiting: 0 });

      // A real image over a lower limit is refused the same way, without reaching the model.
      const [r] = await detectImages(engine, [{ ok: true, data: boat }], { maxPixels: 100_000 });
      expect(r).toEqual({ seq: 0, status: 'failed', reason: 'image exceeds the pixel limit' });
      expect(run).toHaveBeenCalledTimes(1);
    } finally {
      run.mockRestore();
    }
  });
});
