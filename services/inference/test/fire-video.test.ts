import { BUILTIN_FIRE_SMOKE_LOWER_BOUND, FireSmokeVideoDetector } from '../src/fire';
import type { RawDetection } from '../src/detection-types';
import { forEachVideoFrame, mediaVideo } from './fire-helpers';

async function runClip(file: string, fps: number, width: number, height: number): Promise<RawDetection[][]> {
  const detector = new FireSmokeVideoDetector();
  const perFrame: RawDetection[][] = [];
  const frames = await forEachVideoFrame(mediaVideo(file), fps, width, height, (img, t) => {
    perFrame.push(detector.push(img, t));
  });
  expect(frames).toBe(perFrame.length);
  expect(frames).toBeGreaterThan(5);
  return perFrame;
}

describe('FireSmokeVideoDetector on ../shared/media videos (ffmpeg pipe, 2-3 fps)', () => {
  it('finds fire in the fire part and smoke in the smoke-plume part of the synthetic clip', async () => {
    const frames = await runClip('fire_smoke_stills_dfire_synth.mp4', 2, 320, 320);
    const above = (f: RawDetection[], label: string) =>
      f.some((d) => d.label === label && d.score >= BUILTIN_FIRE_SMOKE_LOWER_BOUND);
    // 12 s at 2 fps: 0-4 s forest fire, 4-8 s fire and smoke, 8-12 s smoke plume.
    const firePart = frames.slice(0, 16);
    const smokePart = frames.slice(17);
    expect(firePart.filter((f) => above(f, 'fire')).length).toBeGreaterThanOrEqual(14);
    expect(smokePart.filter((f) => above(f, 'smoke')).length).toBeGreaterThanOrEqual(smokePart.length - 1);
  });

  it('reports nothing above 0.8 on the pedestrian clip', async () => {
    const frames = await runClip('pedestrians_vtest_opencv_10s.mov', 3, 320, 240);
    const max = Math.max(0, ...frames.flat().map((d) => d.score));
    expect(max).toBeLessThanOrEqual(0.8);
  });

  it('rejects a non-finite time', () => {
    const d = new FireSmokeVideoDetector();
    const img = { data: Buffer.alloc(12), width: 2, height: 2, channels: 3 as const };
    expect(() => d.push(img, Number.NaN)).toThrow(/finite/);
  });
});
