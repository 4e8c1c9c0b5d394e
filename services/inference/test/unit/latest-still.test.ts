import sharp from 'sharp';
import type { SourceFrame } from '../../src/jobs/frame-source';
import { LatestStill, rgbOfPlanes } from '../../src/jobs/latest-still';

const SIZE = 8;

/** A letterboxed canvas of SIZE x SIZE gbrp planes whose top-left w x h pixel (x, y) is rgb(x*30, y*30, 200). */
function frame(width: number, height: number, capturedAt: number): SourceFrame {
  const plane = SIZE * SIZE;
  const planes = Buffer.alloc(3 * plane, 114);
  const r = SIZE / Math.max(width, height);
  for (let y = 0; y < Math.round(height * r); y++)
    for (let x = 0; x < Math.round(width * r); x++) {
      const i = y * SIZE + x;
      planes[i] = y * 30; // G
      planes[plane + i] = 200; // B
      planes[2 * plane + i] = x * 30; // R
    }
  return { planes, ptsMs: 0, width, height, capturedAt };
}

/** A whole canvas of one grey. */
const grey = (v: number): SourceFrame => ({
  planes: Buffer.alloc(3 * SIZE * SIZE, v),
  ptsMs: 0,
  width: SIZE,
  height: SIZE,
  capturedAt: 0,
});

describe('the latest picture of a job', () => {
  it('interleaves the G, B, R planes of the picture part of the canvas as RGB', () => {
    const rgb = rgbOfPlanes(frame(8, 4, 0).planes, SIZE, 8, 4);
    expect(rgb.length).toBe(8 * 4 * 3);
    expect([...rgb.subarray(0, 3)]).toEqual([0, 0, 200]);
    const at = (x: number, y: number) => [...rgb.subarray((y * 8 + x) * 3, (y * 8 + x) * 3 + 3)];
    expect(at(5, 3)).toEqual([150, 90, 200]);
  });

  it('is a JPEG of the picture part (the stream’s aspect ratio), none before the first frame', async () => {
    const still = new LatestStill(SIZE, 1000, () => 0);
    expect(still.still()).toBeUndefined();
    still.offer(frame(1600, 800, 0), 40);
    const got = (await still.still())!;
    expect([got.width, got.height, got.source_width, got.source_height, got.frame_time_ms]).toEqual([
      8, 4, 1600, 800, 40,
    ]);
    const meta = await sharp(got.jpeg).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 8, 4]);
    // Encoded once per kept frame.
    expect(still.still()).toBe(still.still());
  });

  it('keeps a frame at most once per interval, a copy that outlives the decoder’s buffer', async () => {
    let now = 0;
    const still = new LatestStill(SIZE, 1000, () => now);
    const first = grey(10);
    still.offer(first, 0);
    first.planes.fill(0); // the decoder reuses its buffer
    now = 500;
    still.offer(grey(250), 500);
    const kept = await sharp((await still.still())!.jpeg)
      .raw()
      .toBuffer();
    expect(Math.abs(kept[0] - 10)).toBeLessThan(8); // the first frame, not the second, nor the reused buffer
    now = 1000;
    still.offer(grey(250), 1000);
    const next = (await still.still())!;
    expect(next.frame_time_ms).toBe(1000);
    expect(Math.abs((await sharp(next.jpeg).raw().toBuffer())[0] - 250)).toBeLessThan(8);
  });
});
