import { BUILTIN_FIRE_SMOKE_LOWER_BOUND, detectFireSmokeImage } from '../src/fire';
import { decodeRgb, mediaImage } from './fire-helpers';

describe('built-in fire/smoke detector on ../shared/media images', () => {
  it.each([
    ['fire_forest_dfire_web10474.jpg', 'fire'],
    ['fire_smoke_forest_dfire_pd01323.jpg', 'fire'],
    ['smoke_plume_dfire_web10976.jpg', 'smoke'],
  ])('%s yields %s at or above the lower bound', async (file, label) => {
    const img = await decodeRgb(mediaImage(file));
    const dets = detectFireSmokeImage(img).filter((d) => d.score >= BUILTIN_FIRE_SMOKE_LOWER_BOUND);
    expect(dets.map((d) => d.label)).toContain(label);
    for (const d of dets) {
      expect(d.box.x1).toBeGreaterThanOrEqual(0);
      expect(d.box.y1).toBeGreaterThanOrEqual(0);
      expect(d.box.x2).toBeLessThanOrEqual(img.width);
      expect(d.box.y2).toBeLessThanOrEqual(img.height);
      expect(d.box.x2).toBeGreaterThan(d.box.x1);
      expect(d.box.y2).toBeGreaterThan(d.box.y1);
    }
  });

  it('puts the forest-fire box on the burning lower part of the image', async () => {
    const img = await decodeRgb(mediaImage('fire_forest_dfire_web10474.jpg'));
    const best = detectFireSmokeImage(img)
      .filter((d) => d.label === 'fire')
      .sort((a, b) => b.score - a.score)[0];
    // Hand-marked: flames fill roughly x 0..640, y 100..620 of the 640x640 image.
    expect(best.box.y2).toBeGreaterThan(450);
    expect(best.box.x2 - best.box.x1).toBeGreaterThan(200);
  });

  it.each(['none_bedroom_coco632.jpg', 'none_brick_facade_kodim01.webp', 'none_empty_forest_cameratrap.jpg'])(
    '%s yields nothing above 0.8',
    async (file) => {
      const dets = detectFireSmokeImage(await decodeRgb(mediaImage(file)));
      expect(dets.filter((d) => d.score > 0.8)).toEqual([]);
    },
  );
});
