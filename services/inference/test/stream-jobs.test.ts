/** @jest-environment ./services/inference/test/support/onnx-environment.js */
import { spawn } from 'node:child_process';
import { CLIP, LiveHttpStream } from './support/live-http-stream';
import { startTestInference, type TestInference } from './support/helpers';

let svc: TestInference;
beforeAll(async () => {
  svc = await startTestInference({
    STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
    INFERENCE_STREAM_GIVEUP_MS: '3000',
    INFERENCE_RECONNECT_MIN_MS: '200',
    INFERENCE_RECONNECT_MAX_MS: '800',
  });
});
afterAll(() => svc.close());

describe('live stream jobs over HTTP', () => {
  it('produces frames with capture times, reconnects after the server is killed, stops on request', async () => {
    const stream = new LiveHttpStream();
    await stream.start();
    const t0 = Date.now();
    const outcome = await svc.parts.jobs.submit({
      job_id: 'live-1',
      scene_code: 'person_vehicle',
      source: { type: 'stream', url: stream.url },
      sample_fps: 5,
    });
    expect(outcome.outcome).toBe('accepted');
    const c = svc.collector;
    await c.waitFor(() => c.frames('live-1').length >= 5, 30_000, 'first frames');
    const first = c.frames('live-1');
    for (const f of first) {
      expect(f.frame_time_ms).toBeGreaterThanOrEqual(t0);
      expect(f.frame_time_ms).toBeLessThanOrEqual(Date.now());
      expect(f.image).toEqual({ width: 480, height: 360 });
    }

    await stream.kill();
    await new Promise((r) => setTimeout(r, 700));
    const before = c.frames('live-1').length;
    expect(svc.parts.jobs.get('live-1')?.status).toBe('running');
    await stream.start(stream.port);
    // Frames still buffered before the kill may arrive first (a loaded machine lags): wait for the
    // reconnect itself, then for frames that came through it.
    await c.waitFor(() => (svc.parts.jobs.get('live-1')?.reconnects ?? 0) >= 1, 30_000, 'a reconnect');
    const afterReconnect = c.frames('live-1').length;
    await c.waitFor(
      () => c.frames('live-1').length >= Math.max(before, afterReconnect) + 5,
      30_000,
      'frames after reconnecting',
    );
    const job = svc.parts.jobs.get('live-1');
    expect(job?.status).toBe('running');
    expect(job?.reconnects).toBeGreaterThanOrEqual(1);
    const frames = c.frames('live-1');
    expect(frames.map((f) => f.seq)).toEqual(frames.map((_, i) => i));

    expect(svc.parts.jobs.stop('live-1')?.status).toBe('stopped');
    const end = await c.waitForEnd('live-1', 10_000);
    expect(end.status).toBe('stopped');
    expect(end.seq).toBe(c.frames('live-1').length);
    await stream.kill();
  });

  it('a stream that never comes back fails the job with a reason after the give-up time', async () => {
    const stream = new LiveHttpStream();
    await stream.start();
    await svc.parts.jobs.submit({
      job_id: 'live-2',
      scene_code: 'person_vehicle',
      source: { type: 'stream', url: stream.url },
      sample_fps: 5,
    });
    const c = svc.collector;
    await c.waitFor(() => c.frames('live-2').length >= 3, 30_000, 'first frames');
    await stream.kill();
    const killedAt = Date.now();
    const end = await c.waitForEnd('live-2', 20_000);
    expect(end.status).toBe('failed');
    expect(end.reason).toMatch(/^stream_lost: .*after 3000 ms, stream_unreachable/);
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(2500);
    expect(svc.parts.jobs.get('live-2')).toMatchObject({ status: 'failed' });
    expect(svc.parts.jobs.get('live-2')?.reconnects).toBeGreaterThanOrEqual(1);
  });

  it('a stream that never answers fails the job too', async () => {
    const stream = new LiveHttpStream();
    await stream.start();
    const url = stream.url;
    await stream.kill();
    expect(
      (await svc.parts.jobs.submit({ job_id: 'live-3', scene_code: 'ship', source: { type: 'stream', url } }))
        .outcome,
    ).toBe('accepted');
    const end = await svc.collector.waitForEnd('live-3', 20_000);
    expect(end).toMatchObject({ status: 'failed', frames: 0, seq: 0 });
  });
});

describe('live stream jobs over RTMP', () => {
  it('reads frames from an RTMP server (ffmpeg -listen) and ends failed when it never comes back', async () => {
    const port = 19000 + Math.floor(Math.random() * 900);
    const server = spawn(
      'ffmpeg',
      [
        '-hide_banner',
        '-loglevel',
        'error',
        '-re',
        '-stream_loop',
        '-1',
        '-i',
        CLIP,
        '-c',
        'copy',
        '-f',
        'flv',
        '-listen',
        '1',
        `rtmp://127.0.0.1:${port}/live/s`,
      ],
      { stdio: 'ignore' },
    );
    try {
      await new Promise((r) => setTimeout(r, 700)); // let it bind
      const outcome = await svc.parts.jobs.submit({
        job_id: 'rtmp-1',
        scene_code: 'person_vehicle',
        source: { type: 'stream', url: `rtmp://127.0.0.1:${port}/live/s` },
        sample_fps: 5,
      });
      expect(outcome.outcome).toBe('accepted');
      const c = svc.collector;
      await c.waitFor(() => c.frames('rtmp-1').length >= 5, 30_000, 'RTMP frames');
      expect(c.frames('rtmp-1')[0].image).toEqual({ width: 480, height: 360 });
      server.kill('SIGKILL');
      const end = await c.waitForEnd('rtmp-1', 20_000);
      expect(end.status).toBe('failed');
      expect(end.reason).toMatch(/^stream_lost: /);
    } finally {
      server.kill('SIGKILL');
    }
  });
});
