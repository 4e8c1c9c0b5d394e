import type { RgbImage } from '../../src/detection-types';
import {
  close,
  detectFireSmokeImage,
  dilate,
  erode,
  isFlamePixel,
  isSmokePixel,
  labelComponents,
  mergeNearBoxes,
  open,
  rgbToYCbCr,
} from '../../src/fire';

function solid(width: number, height: number, rgb: [number, number, number]): RgbImage {
  const data = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * height; i++) data.set(rgb, i * 3);
  return { data, width, height, channels: 3 };
}

function paintRect(
  img: RgbImage,
  x1: number,
  y1: number,
  x2: number,
  y2: number,
  rgb: [number, number, number],
) {
  for (let y = y1; y < y2; y++) for (let x = x1; x < x2; x++) img.data.set(rgb, (y * img.width + x) * 3);
}

function maskOf(rows: string[]) {
  const height = rows.length;
  const width = rows[0].length;
  const data = new Uint8Array(width * height);
  rows.forEach((r, y) => [...r].forEach((c, x) => (data[y * width + x] = c === '#' ? 1 : 0)));
  return { width, height, data };
}

describe('colour rules', () => {
  it('converts RGB to BT.601 YCbCr', () => {
    expect(rgbToYCbCr(255, 255, 255)).toEqual({
      y: expect.closeTo(255, 3),
      cb: expect.closeTo(128, 3),
      cr: expect.closeTo(128, 3),
    });
    const red = rgbToYCbCr(255, 0, 0);
    expect(red.y).toBeCloseTo(76.245, 2);
    expect(red.cr).toBeCloseTo(255.5, 1);
    expect(red.cb).toBeCloseTo(84.97, 1);
  });

  const darkScene = { meanY: 60, meanCb: 125, meanCr: 135 };
  it('accepts orange/yellow flame colours and rejects grey, blue, green and dull red', () => {
    expect(isFlamePixel(250, 160, 40, darkScene)).toBe(true); // orange flame
    expect(isFlamePixel(255, 210, 90, darkScene)).toBe(true); // yellow flame
    expect(isFlamePixel(128, 128, 128, darkScene)).toBe(false); // grey
    expect(isFlamePixel(40, 90, 220, darkScene)).toBe(false); // blue
    expect(isFlamePixel(60, 200, 60, darkScene)).toBe(false); // green
    expect(isFlamePixel(140, 70, 50, darkScene)).toBe(false); // brick: R below R_T
  });

  it('needs flame pixels to be brighter and redder than the image mean', () => {
    const brightWarmScene = { meanY: 230, meanCb: 100, meanCr: 170 };
    expect(isFlamePixel(250, 160, 40, brightWarmScene)).toBe(false);
  });

  it('accepts whitish warm glow only when much brighter than a dark scene', () => {
    expect(isFlamePixel(255, 240, 200, darkScene)).toBe(true);
    expect(isFlamePixel(255, 240, 200, { meanY: 200, meanCb: 120, meanCr: 140 })).toBe(false);
  });

  it('classifies grey as smoke and saturated or bluish colours as not smoke', () => {
    expect(isSmokePixel(150, 148, 145)).toBe(true);
    expect(isSmokePixel(250, 160, 40)).toBe(false);
    expect(isSmokePixel(150, 170, 210)).toBe(false); // blue sky
    expect(isSmokePixel(20, 20, 20)).toBe(false); // too dark
  });
});

describe('morphology and components', () => {
  it('dilates, erodes, opens and closes with a 3x3 element', () => {
    const dot = maskOf(['.....', '.....', '..#..', '.....', '.....']);
    expect(Array.from(dilate(dot, 1).data).reduce((a, b) => a + b, 0)).toBe(9);
    expect(Array.from(erode(dilate(dot, 1), 1).data)).toEqual(Array.from(dot.data));
    expect(Array.from(open(dot, 1).data).every((v) => v === 0)).toBe(true);
    const gap = maskOf(['.......', '.##.##.', '.##.##.', '.......']);
    expect(close(gap, 1).data[1 * 7 + 3]).toBe(1);
  });

  it('labels 8-connected components with boxes and areas', () => {
    const m = maskOf(['##....#', '.#....#', '..#....', '.....##']);
    const { components } = labelComponents(m);
    expect(components.map((c) => [c.area, c.minX, c.minY, c.maxX, c.maxY])).toEqual([
      [4, 0, 0, 2, 2],
      [2, 6, 0, 6, 1],
      [2, 5, 3, 6, 3],
    ]);
  });

  it('merges boxes within the gap and keeps distant ones apart', () => {
    const merged = mergeNearBoxes(
      [
        { minX: 0, minY: 0, maxX: 4, maxY: 4 },
        { minX: 6, minY: 0, maxX: 8, maxY: 3 },
        { minX: 40, minY: 40, maxX: 45, maxY: 45 },
      ],
      2,
    );
    expect(merged).toHaveLength(2);
    expect(merged).toContainEqual({ minX: 0, minY: 0, maxX: 8, maxY: 4 });
  });
});

describe('detectFireSmokeImage on synthetic images', () => {
  it('boxes an orange flame patch on a dark scene', () => {
    const img = solid(400, 300, [20, 25, 30]);
    paintRect(img, 100, 120, 160, 200, [250, 150, 30]);
    paintRect(img, 115, 140, 145, 180, [255, 220, 120]);
    const fire = detectFireSmokeImage(img).filter((d) => d.label === 'fire');
    expect(fire).toHaveLength(1);
    const { box } = fire[0];
    expect(box.x1).toBeGreaterThanOrEqual(96);
    expect(box.x1).toBeLessThanOrEqual(104);
    expect(box.x2).toBeGreaterThanOrEqual(156);
    expect(box.x2).toBeLessThanOrEqual(164);
    expect(box.y1).toBeGreaterThanOrEqual(116);
    expect(box.y2).toBeLessThanOrEqual(204);
    expect(fire[0].score).toBeGreaterThan(0);
    expect(fire[0].score).toBeLessThanOrEqual(1);
  });

  it('finds no fire on a uniform image or on a blue/green scene', () => {
    expect(detectFireSmokeImage(solid(64, 64, [250, 150, 30])).filter((d) => d.label === 'fire')).toEqual([]);
    const scene = solid(200, 200, [60, 120, 200]);
    paintRect(scene, 0, 100, 200, 200, [40, 140, 50]);
    expect(detectFireSmokeImage(scene)).toEqual([]);
  });

  it('rejects malformed pixel buffers', () => {
    expect(() =>
      detectFireSmokeImage({ data: Buffer.alloc(10), width: 10, height: 10, channels: 3 }),
    ).toThrow(/too short/);
  });
});
