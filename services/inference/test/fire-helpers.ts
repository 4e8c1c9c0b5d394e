/** Test helpers for the fire/smoke detector tests: media paths, sharp decoding, ffmpeg frame pipes. */
import { spawn } from 'child_process';
import path from 'path';
import sharp from 'sharp';
import type { RgbImage } from '../src/detection-types';

export const sharedDir = process.env.VISION_SHARED_DIR ?? path.resolve(__dirname, '../../../../shared');
export const mediaImage = (name: string): string => path.join(sharedDir, 'media/images', name);
export const mediaVideo = (name: string): string => path.join(sharedDir, 'media/videos', name);
export const dfireDir = path.join(sharedDir, 'datasets/dfire-valid');

export async function decodeRgb(file: string): Promise<RgbImage> {
  const { data, info } = await sharp(file)
    .removeAlpha()
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: 3 };
}

/** Decodes a video with ffmpeg into raw RGB frames through a pipe (nothing written to disk). */
export async function forEachVideoFrame(
  file: string,
  fps: number,
  width: number,
  height: number,
  onFrame: (img: RgbImage, timeMs: number) => void,
): Promise<number> {
  const frameBytes = width * height * 3;
  const proc = spawn('ffmpeg', [
    '-loglevel',
    'error',
    '-i',
    file,
    '-vf',
    `fps=${fps},scale=${width}:${height}`,
    '-f',
    'rawvideo',
    '-pix_fmt',
    'rgb24',
    'pipe:1',
  ]);
  let pending = Buffer.alloc(0);
  let index = 0;
  let stderr = '';
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  proc.stdout.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= frameBytes) {
      const data = Buffer.from(pending.subarray(0, frameBytes));
      pending = pending.subarray(frameBytes);
      onFrame({ data, width, height, channels: 3 }, (index * 1000) / fps);
      index++;
    }
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    proc.on('error', reject);
    proc.on('close', resolve);
  });
  if (code !== 0) throw new Error(`ffmpeg exited with ${String(code)}: ${stderr}`);
  return index;
}
