/**
 * A machine whose ffmpeg is missing: the scene list says video is unavailable and creating a video task
 * answers 503 OP-SYS-UNAVAILABLE before anything is charged (stream and upload). Standalone only: in the
 * distributed suite an inference that is not ready never joins the deployment.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { MEDIA, startStack, type TestStack } from '../helpers/stack';

const KEY = 'e2e-preflight-key-0123456789';
const run = process.env.E2E_STACK === 'distributed' ? describe.skip : describe;

run('video tasks without a working decoder', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ keys: `${KEY}:nodecoder`, env: { FFMPEG_PATH: '/nonexistent/ffmpeg' } });
  }, 120_000);
  afterAll(() => stack?.close());

  it('scene list says video is unavailable; create answers 503 and charges nothing', async () => {
    const scenes = await stack.api('GET', '/api/op/v1/scenes', { key: KEY });
    expect(scenes.status).toBe(200);
    for (const s of scenes.body.scenes) {
      expect(s.video_enabled).toBe(false);
      expect(s.video_reason).toMatch(/ffmpeg is not installed/);
    }
    const used = async () => (await stack.api('GET', '/v1/vision/quota', { key: KEY })).body.video_tasks.used;
    expect(await used()).toBe(0);

    const byUrl = await stack.api('POST', '/v1/vision/tasks', {
      key: KEY,
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ scene_code: 'person_vehicle', stream_url: 'rtsp://127.0.0.1:9/cam' }),
    });
    expect(byUrl.status).toBe(503);
    expect(byUrl.body.error).toMatchObject({
      code: 'OP-SYS-UNAVAILABLE',
      details: { reason: 'decoder_unavailable' },
    });

    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    const clip = path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv_10s.mov');
    form.append('file', new Blob([readFileSync(clip)]), 'clip.mov');
    const upload = await stack.api('POST', '/v1/vision/video-tasks', {
      key: KEY,
      headers: { 'idempotency-key': randomUUID() },
      body: form,
    });
    expect(upload.status).toBe(503);
    expect(upload.body.error).toMatchObject({
      code: 'OP-SYS-UNAVAILABLE',
      details: { reason: 'decoder_unavailable' },
    });
    expect(await used()).toBe(0);
    expect((await stack.api('GET', '/v1/vision/tasks', { key: KEY })).body.items ?? []).toEqual([]);
  }, 120_000);
});
