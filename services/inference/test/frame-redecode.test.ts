/** @jest-environment ./services/inference/test/support/onnx-environment.js */
/**
 * A file job's frame that is not in its ring is decoded again from the upload (docs/EVIDENCE.md): the
 * picture is the same bytes as the ring's picture of that frame, for every frame of the clip, asked all at once or
 * one by one far into the clip; a frame never published, or one of an upload deleted since, is none.
 */
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { VIDEOS_DIR, startTestInference, type TestInference } from './support/helpers';

const CLIP = 'pedestrians_vtest_opencv_10s.mov';
const BOX = { box: [0.2, 0.3, 0.6, 0.9] as [number, number, number, number] };

let svc: TestInference;
beforeAll(async () => {
  svc = await startTestInference({ INFERENCE_FRAME_RING: '1000', INFERENCE_REDECODE_TIMEOUT_MS: '30000' });
  await svc.store.put(`uploads/${CLIP}`, createReadStream(path.join(VIDEOS_DIR, CLIP)));
  await svc.store.put('uploads/gone.mov', createReadStream(path.join(VIDEOS_DIR, CLIP)));
  // The same upload twice: one job keeps every frame in its ring, the other keeps none.
  for (const [id, key, keep] of [
    ['kept', CLIP, true],
    ['redecoded', CLIP, false],
    ['deleted', 'gone.mov', false],
  ] as const) {
    const r = await svc.parts.jobs.submit({
      job_id: id,
      scene_code: 'person_vehicle',
      source: { type: 'object', key: `uploads/${key}` },
      sample_fps: 5,
      keep_frames: keep,
    });
    expect(r.outcome).toBe('accepted');
  }
  for (const id of ['kept', 'redecoded', 'deleted']) await svc.collector.waitForEnd(id, 120_000);
}, 180_000);
afterAll(() => svc.close());

describe('frames decoded again from the upload', () => {
  it('every frame asked at once: the same picture bytes as the ring gives', async () => {
    const n = svc.collector.frames('kept').length;
    expect(n).toBeGreaterThan(40);
    const seqs = Array.from({ length: n }, (_, i) => i);
    const [kept, again] = await Promise.all([
      Promise.all(seqs.map((s) => svc.parts.jobs.picture('kept', s, BOX))),
      Promise.all(seqs.map((s) => svc.parts.jobs.picture('redecoded', s, BOX))),
    ]);
    for (const s of seqs) {
      const [a, b] = [kept[s], again[s]];
      if (!a.ok || !b.ok) throw new Error(`seq ${s}: no picture (ring ${a.ok}, re-decode ${b.ok})`);
      expect([s, b.timeMs, b.jpeg.equals(a.jpeg), b.crop.equals(a.crop)]).toEqual([s, a.timeMs, true, true]);
    }
  }, 120_000);

  it('one frame far into the clip, asked alone, seeks there and is the same frame', async () => {
    for (const s of [47, 23, 6]) {
      const [a, b] = await Promise.all([
        svc.parts.jobs.picture('kept', s, BOX),
        svc.parts.jobs.picture('redecoded', s, BOX),
      ]);
      expect(a.ok && b.ok && b.jpeg.equals(a.jpeg)).toBe(true);
    }
  }, 60_000);

  it('no picture of a frame never published, or of an upload deleted since', async () => {
    const n = svc.collector.frames('redecoded').length;
    expect((await svc.parts.jobs.picture('redecoded', n, BOX)).ok).toBe(false);
    await svc.store.delete(['uploads/gone.mov']);
    expect((await svc.parts.jobs.picture('deleted', 3, BOX)).ok).toBe(false);
    expect((await svc.parts.jobs.picture('no-such-job', 3, BOX)).ok).toBe(false);
  }, 60_000);
});
