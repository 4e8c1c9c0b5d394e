import sharp from 'sharp';
import type { SourceFrame } from '../../src/jobs/frame-source';
import { cropRegion, draw, renderPicture } from '../../src/jobs/frame-picture';
import { FrameRing } from '../../src/jobs/frame-ring';

const SIZE = 64;

/** A letterboxed canvas whose content pixel (x, y) is rgb(x * 4, y * 4, tag), padded with 114. */
function frame(width: number, height: number, tag: number): SourceFrame {
  const plane = SIZE * SIZE;
  const planes = Buffer.alloc(3 * plane, 114);
  const r = SIZE / Math.max(width, height);
  for (let y = 0; y < Math.round(height * r); y++)
    for (let x = 0; x < Math.round(width * r); x++) {
      const i = y * SIZE + x;
      planes[i] = y * 4; // G
      planes[plane + i] = tag; // B
      planes[2 * plane + i] = x * 4; // R
    }
  return { planes, ptsMs: 0, width, height, capturedAt: 0 };
}

describe('the ring of recent frames', () => {
  it('keeps nothing until armed: a job without rules copies no frame', () => {
    const ring = new FrameRing(4, SIZE);
    expect(ring.hold(frame(1600, 900, 1))).toBeUndefined();
    expect(ring.bytes).toBe(0);
    new FrameRing(0, SIZE).arm();
    const off = new FrameRing(0, SIZE);
    off.arm();
    expect(off.isArmed).toBe(false);
  });

  it('keeps the last `capacity` frames by seq, the content without the padding, as G, B, R planes', () => {
    const ring = new FrameRing(3, SIZE);
    ring.arm();
    for (let seq = 10; seq < 15; seq++) ring.put(seq, seq * 200, ring.hold(frame(1600, 900, seq))!);
    expect(ring.get(10)).toBeUndefined();
    expect(ring.get(11)).toBeUndefined();
    const f = ring.get(13)!;
    expect([f.seq, f.timeMs, f.width, f.height]).toEqual([13, 2600, 64, 36]);
    expect(f.planes.length).toBe(64 * 36 * 3);
    const plane = 64 * 36;
    const at = (x: number, y: number) => [
      f.planes[2 * plane + y * 64 + x],
      f.planes[y * 64 + x],
      f.planes[plane + y * 64 + x],
    ];
    expect(at(5, 7)).toEqual([20, 28, 13]);
    expect(at(63, 35)).toEqual([252, 140, 13]);
    // Three frames and at most two spare buffers, whatever the length of the job.
    expect(ring.bytes).toBeLessThanOrEqual(5 * 64 * 36 * 3);
    ring.clear();
    expect(ring.get(14)).toBeUndefined();
    expect(ring.hold(frame(1600, 900, 1))).toBeUndefined();
  });

  it('copies a portrait frame row by row', () => {
    const ring = new FrameRing(1, SIZE);
    ring.arm();
    ring.put(0, 0, ring.hold(frame(900, 1600, 7))!);
    const f = ring.get(0)!;
    expect([f.width, f.height]).toEqual([36, 64]);
    const plane = 36 * 64;
    expect([f.planes[2 * plane + 10 * 36 + 35], f.planes[10 * 36 + 35]]).toEqual([140, 40]);
  });
});

describe('the picture of an event', () => {
  const ringFrame = () => {
    const ring = new FrameRing(1, SIZE);
    ring.arm();
    ring.put(3, 600, ring.hold(frame(1600, 900, 50))!);
    return ring.get(3)!;
  };

  it('draws a box on the pixels of its edges and nowhere else', () => {
    const w = 20;
    const h = 10;
    const rgb = Buffer.alloc(w * h * 3);
    draw(rgb, w, h, { box: [0.25, 0.2, 0.75, 0.8] });
    const ink = (x: number, y: number) => rgb[(y * w + x) * 3] === 255;
    expect(ink(5, 2) && ink(15, 8) && ink(10, 2) && ink(5, 5)).toBe(true);
    expect(ink(10, 5)).toBe(false);
    expect(ink(0, 0)).toBe(false);
  });

  it('crops the drawing’s bounding box, inside the frame and at least 2 x 2 pixels', () => {
    expect(cropRegion({ box: [0.25, 0.5, 0.5, 1] }, 64, 36)).toEqual({
      left: 16,
      top: 18,
      width: 16,
      height: 18,
    });
    expect(cropRegion({ box: [1, 1, 1, 1] }, 64, 36)).toEqual({ left: 62, top: 34, width: 2, height: 2 });
    expect(
      cropRegion(
        {
          polygon: [
            [0.1, 0.1],
            [0.5, 0.2],
            [0.3, 0.9],
          ],
        },
        100,
        100,
      ),
    ).toEqual({
      left: 10,
      top: 10,
      width: 40,
      height: 80,
    });
  });

  it('is a JPEG of the frame with the box, and the crop of the clean frame; the same bytes every time', async () => {
    const a = await renderPicture(ringFrame(), { box: [0.25, 0.25, 0.75, 0.75] });
    const b = await renderPicture(ringFrame(), { box: [0.25, 0.25, 0.75, 0.75] });
    expect(a.jpeg.equals(b.jpeg) && a.crop.equals(b.crop)).toBe(true);
    const full = await sharp(a.jpeg).raw().toBuffer({ resolveWithObject: true });
    expect([full.info.format, full.info.width, full.info.height]).toEqual(['raw', 64, 36]);
    const px = (x: number, y: number) => [...full.data.subarray((y * 64 + x) * 3, (y * 64 + x) * 3 + 3)];
    const [r, g, bl] = px(32, 9); // on the top edge
    expect(r > 180 && g < 100 && bl < 100).toBe(true);
    const crop = await sharp(a.crop).raw().toBuffer({ resolveWithObject: true });
    expect([crop.info.width, crop.info.height]).toEqual([32, 18]);
    // The crop has no ink: its top row's middle is the frame's own pixel (32, 9), rgb(32 * 4, 9 * 4, 50).
    const c = [...crop.data.subarray(16 * 3, 16 * 3 + 3)];
    [128, 36, 50].forEach((v, i) => expect(Math.abs(c[i] - v)).toBeLessThan(25));
  });
});
