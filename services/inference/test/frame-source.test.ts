import { createHash } from 'node:crypto';
import path from 'node:path';
import { ffmpegArgs } from '../src/jobs/ffmpeg-args';
import { FfmpegFrameSource, type SourceFrame } from '../src/jobs/frame-source';
import { packBgrTensor, packGbrpTensor } from '../src/model/letterbox';
import { VIDEOS_DIR } from './support/helpers';

/**
 * FfmpegFrameSource with real ffmpeg on a real clip: a frame buffer handed back with `recycle()` is
 * written again for a later frame, and every frame still holds its own pixels (same as without reuse);
 * the planar frames make exactly the tensors that interleaved bgr24 frames of the same filters make.
 */
const SIZE = 416;
const args = ffmpegArgs({
  input: path.join(VIDEOS_DIR, 'pedestrians_vtest_opencv_10s.mov'),
  kind: 'file',
  live: false,
  sampleFps: 5,
  size: SIZE,
});

type Recycle = (source: FfmpegFrameSource, f: SourceFrame) => void;

/** A frame source on real ffmpeg with `frameArgs`. */
function frameSource(frameArgs: string[], onFrame: (f: SourceFrame) => void): FfmpegFrameSource {
  return new FfmpegFrameSource({
    ffmpegPath: process.env.FFMPEG_PATH ?? 'ffmpeg',
    args: frameArgs,
    frameBytes: SIZE * SIZE * 3,
    onFrame,
  });
}

/** Every frame of `frameArgs`, each in a buffer of its own. */
async function allFrames(frameArgs: string[]): Promise<Buffer[]> {
  const frames: Buffer[] = [];
  const source = frameSource(frameArgs, (f) => frames.push(f.planes));
  expect((await source.done).code).toBe(0);
  return frames;
}

async function decode(recycle?: Recycle): Promise<{ hashes: string[]; buffers: Set<Buffer> }> {
  const hashes: string[] = [];
  const buffers = new Set<Buffer>();
  // Two frames are held before the older one is read and handed back, as a job's frames wait to start.
  const source: FfmpegFrameSource = frameSource(args, (f) => {
    buffers.add(f.planes);
    held.push(f);
    if (held.length > 2) release(held.shift() as SourceFrame);
  });
  const held: SourceFrame[] = [];
  const release = (f: SourceFrame) => {
    hashes.push(createHash('sha256').update(f.planes).digest('hex'));
    recycle?.(source, f);
  };
  const exit = await source.done;
  held.forEach(release);
  expect(exit.code).toBe(0);
  return { hashes, buffers };
}

describe('FfmpegFrameSource', () => {
  let fresh: { hashes: string[]; buffers: Set<Buffer> };
  beforeAll(async () => {
    fresh = await decode();
  });

  it('gives each frame a buffer of its own when none is handed back', () => {
    expect(fresh.hashes.length).toBeGreaterThanOrEqual(45);
    expect(new Set(fresh.hashes).size).toBeGreaterThan(40); // a moving scene: frames differ
    expect(fresh.buffers.size).toBe(fresh.hashes.length);
  });

  it('writes later frames into recycled buffers, each frame with its own pixels', async () => {
    const reused = await decode((source, f) => source.recycle(f.planes));
    expect(reused.hashes).toEqual(fresh.hashes);
    expect(reused.buffers.size).toBeLessThanOrEqual(5);
  });

  it('keeps a buffer handed back twice once, and ignores one of another size', async () => {
    let first = true;
    const reused = await decode((source, f) => {
      source.recycle(Buffer.alloc(10));
      if (!first) return;
      first = false;
      source.recycle(f.planes);
      source.recycle(f.planes); // kept twice, the next two frames would share it and the first be overwritten
    });
    expect(reused.hashes).toEqual(fresh.hashes);
    expect(reused.buffers.size).toBe(fresh.hashes.length - 1);
  });

  it('delivers planar frames that pack into the tensors of interleaved bgr24 frames', async () => {
    // The chain before frames were planar: bgr24 out of the same scale, padded, on the pipe.
    const interleavedArgs = args.map((a) =>
      a === 'gbrp' ? 'bgr24' : a.includes(',format=gbrp') ? a.replace(',format=gbrp', '') : a,
    );
    expect(interleavedArgs).not.toEqual(args);
    const [planar, interleaved] = await Promise.all([allFrames(args), allFrames(interleavedArgs)]);
    expect(planar.length).toBe(fresh.hashes.length);
    expect(interleaved.length).toBe(planar.length);
    planar.forEach((planes, i) => {
      const want = packBgrTensor(interleaved[i], SIZE, SIZE, SIZE, 'bgr');
      expect(Buffer.from(packGbrpTensor(planes, SIZE).buffer).equals(Buffer.from(want.buffer))).toBe(true);
    });
  });
});
