/**
 * A machine whose ffmpeg is missing: the scene list says video is unavailable and creating a video task
 * answers 503 OP-SYS-UNAVAILABLE before anything is charged (stream and upload). Standalone only: in the
 * distributed suite an inference that is not ready never joins the deployment.
 * And a decoder that crashes at runtime (against GStreamer's gst-rtsp-server): the task is charged once
 * and refunded once.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '../helpers/media-server';
import { standaloneOnly } from '../helpers/composition';
import { MEDIA, startStack, type TestStack } from '../helpers/stack';
import { streamServer, streamUrls, type StreamServer } from '../helpers/stream-servers';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

const KEY = 'e2e-preflight-key-0123456789';
const notReady = standaloneOnly('the launcher starts no deployment whose inference is not ready');
/** The crash is the decoder's, a child of the inference service, which both compositions run alike. */
const crashing = standaloneOnly(
  'the decoder crashes inside the inference service, which both compositions run alike',
);

notReady.describe('video tasks without a working decoder', () => {
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

crashing.describe('a decoder that keeps crashing at runtime', () => {
  const CRASH_KEY = 'e2e-crashing-decoder-0123456789';
  let stack: TestStack;
  let rtsp: StreamServer;
  let dir: string;
  beforeAll(async () => {
    // The real ffmpeg, sent SIGSEGV one second into each decoding run (its start-up checks pass).
    dir = mkdtempSync(path.join(os.tmpdir(), 'crashing-ffmpeg-'));
    const wrapper = path.join(dir, 'ffmpeg');
    writeFileSync(
      wrapper,
      '#!/usr/bin/env bash\ncase " $* " in *" pipe:1 "*) ( sleep 1; kill -SEGV $$ ) >/dev/null 2>&1 </dev/null & ;; esac\nexec ffmpeg "$@"\n',
    );
    chmodSync(wrapper, 0o755);
    rtsp = await streamServer('rtsp');
    await rtsp.start();
    stack = await startStack({
      keys: `${CRASH_KEY}:crashing`,
      env: {
        FFMPEG_PATH: wrapper,
        INFERENCE_RECONNECT_MIN_MS: '200',
        INFERENCE_RECONNECT_MAX_MS: '400',
        TASKS_POLL_INTERVAL_MS: '300',
        TASKS_PROBE_TIMEOUT_MS: '45000',
        TASKS_BACKEND_TIMEOUT_MS: '30000',
        TASKS_BREAKER_HANG_MS: '30000',
      },
    });
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
    await rtsp?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the task is charged once, then refunded once with decoder_unavailable', async () => {
    const used = async () =>
      (await stack.api('GET', '/v1/vision/quota', { key: CRASH_KEY })).body.video_tasks.used as number;
    const created = await stack.api('POST', '/v1/vision/tasks', {
      key: CRASH_KEY,
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ scene_code: 'person_vehicle', stream_url: streamUrls(rtsp).rtsp }),
    });
    expect(created.status).toBe(201);
    expect(await used()).toBe(1);
    const ended = await waitFor(
      'the task to end',
      async () => {
        const t = await stack.api('GET', `/v1/vision/tasks/${created.body.task_id}`, { key: CRASH_KEY });
        return ['running', 'submitting', 'stopping'].includes(t.body.status) ? undefined : t.body;
      },
      90_000,
    );
    expect(ended).toMatchObject({
      status: 'refunded',
      reason: 'decoder_unavailable: the video decoder is unavailable (crashed 3 times)',
    });
    expect(await used()).toBe(0);
    await new Promise((r) => setTimeout(r, 1500)); // later poll and reconcile rounds refund nothing more
    expect(await used()).toBe(0);
  }, 150_000);
});
