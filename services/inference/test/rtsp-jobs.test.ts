/** @jest-environment ./services/inference/test/support/onnx-environment.js */
/**
 * Live RTSP jobs against a real RTSP server: GStreamer's gst-rtsp-server (scripts/stack/live/rtsp-server.py)
 * serving the camera-like clip in a loop, with Basic authentication.
 */
import { streamServer, streamUrls, type StreamServer } from '../../../test/helpers/stream-servers';
import { startTestInference, type TestInference } from './support/helpers';

let svc: TestInference;
let rtsp: StreamServer;
beforeAll(async () => {
  rtsp = await streamServer('rtsp-auth');
  await rtsp.start();
  svc = await startTestInference({
    STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
    INFERENCE_STREAM_GIVEUP_MS: '4000',
    INFERENCE_RECONNECT_MIN_MS: '200',
    INFERENCE_RECONNECT_MAX_MS: '800',
  });
}, 90_000);
afterAll(async () => {
  await svc?.close();
  await rtsp?.stop();
});

it('decodes an authenticated RTSP stream, reconnects after a server restart, stops on request', async () => {
  const url = streamUrls(rtsp).rtsp;
  const t0 = Date.now();
  const c = svc.collector;
  expect(
    (
      await svc.parts.jobs.submit({
        job_id: 'rtsp-1',
        scene_code: 'person_vehicle',
        source: { type: 'stream', url },
        sample_fps: 5,
      })
    ).outcome,
  ).toBe('accepted');
  await c.waitFor(() => c.frames('rtsp-1').length >= 5, 60_000, 'RTSP frames');
  const first = c.frames('rtsp-1');
  expect(first[0].image).toEqual({ width: 480, height: 360 });
  for (const f of first) expect(f.frame_time_ms).toBeGreaterThanOrEqual(t0);
  expect(first.some((f) => f.objects.some((o) => o.label === 'person'))).toBe(true);

  await rtsp.stop();
  await rtsp.start();
  await c.waitFor(() => (svc.parts.jobs.get('rtsp-1')?.reconnects ?? 0) >= 1, 30_000, 'a reconnect');
  const after = c.frames('rtsp-1').length;
  await c.waitFor(() => c.frames('rtsp-1').length >= after + 5, 60_000, 'frames after the restart');
  expect(svc.parts.jobs.get('rtsp-1')?.status).toBe('running');

  expect(svc.parts.jobs.stop('rtsp-1')?.status).toBe('stopped');
  expect((await c.waitForEnd('rtsp-1', 10_000)).status).toBe('stopped');
}, 180_000);

it('fails with the reason when the RTSP server answers 401 (wrong credentials) for longer than the give-up time', async () => {
  const url = `rtsp://camuser:wrong@127.0.0.1:${rtsp.port}/cam`;
  await svc.parts.jobs.submit({
    job_id: 'rtsp-401',
    scene_code: 'person_vehicle',
    source: { type: 'stream', url },
  });
  const end = await svc.collector.waitForEnd('rtsp-401', 60_000);
  expect(end.status).toBe('failed');
  expect(end.reason).toMatch(/401|unauthori[sz]ed|authori[sz]ation/i);
  expect(end.reason).not.toContain('wrong');
}, 90_000);
