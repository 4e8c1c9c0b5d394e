/** @jest-environment ./services/inference/test/support/onnx-environment.js */
import { createReadStream, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { VIDEOS_DIR, startTestInference, type FrameMsg, type TestInference } from './support/helpers';

/**
 * fire_smoke file jobs on the synthetic clip of ../shared/media (0-4 s forest fire, 4-8 s fire and smoke,
 * 8-12 s smoke plume), with our fire model (a tensor packed from ffmpeg's planar frames) and with the
 * built-in colour-and-motion detector (the frame's content copied out as RGB). Channels taken in the
 * wrong order turn the fire blue: neither engine then finds it.
 */
const CLIP = 'fire_smoke_stills_dfire_synth.mp4';

async function fireJob(svc: TestInference, jobId: string): Promise<FrameMsg[]> {
  await svc.store.put(`uploads/${CLIP}`, createReadStream(path.join(VIDEOS_DIR, CLIP)));
  const outcome = await svc.parts.jobs.submit({
    job_id: jobId,
    scene_code: 'fire_smoke',
    source: { type: 'object', key: `uploads/${CLIP}` },
    sample_fps: 2,
  });
  expect(outcome.outcome).toBe('accepted');
  expect(await svc.collector.waitForEnd(jobId)).toMatchObject({ status: 'succeeded' });
  const frames = svc.collector.frames(jobId);
  expect(frames.length).toBeGreaterThanOrEqual(22);
  return frames;
}

const has = (f: FrameMsg, label: string, min: number) =>
  f.objects.some((o) => o.label === label && o.score >= min);

describe.each([
  ['our fire model', {}],
  ['the built-in detector', { builtin: true }],
])('fire_smoke file job with %s', (_name, { builtin }: { builtin?: boolean }) => {
  let svc: TestInference;
  beforeAll(async () => {
    const env: Record<string, string> = {};
    if (builtin) {
      const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'scenes-')), 'scenes.json');
      writeFileSync(
        file,
        JSON.stringify({ scenes: { fire_smoke: { engine: 'builtin', detector: 'fire-colour-motion' } } }),
      );
      env.INFERENCE_SCENES_FILE = file;
    }
    svc = await startTestInference(env);
  });
  afterAll(() => svc.close());

  it('finds fire in the fire part and smoke in the plume', async () => {
    const engine = svc.parts.catalogue.status('fire_smoke')?.engine;
    expect(engine).toMatch(builtin ? /^builtin:/ : /^onnx:/);
    const frames = await fireJob(svc, `task-fire-${builtin ? 'builtin' : 'model'}`);
    const lower = frames[0].lower_bound;
    const firePart = frames.filter((f) => f.frame_time_ms < 4000);
    const plume = frames.filter((f) => f.frame_time_ms >= 8500);
    expect(firePart.filter((f) => has(f, 'fire', lower)).length).toBeGreaterThanOrEqual(firePart.length - 1);
    expect(plume.filter((f) => has(f, 'smoke', lower)).length).toBeGreaterThanOrEqual(plume.length - 1);
  });
});
