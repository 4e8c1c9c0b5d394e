/** @jest-environment ./services/inference/test/support/onnx-environment.js */
import { execFileSync } from 'node:child_process';
import request from 'supertest';
import { checkDecoder, checkOptionSupport, parseOptionHelp } from '../src/jobs/decoder-preflight';
import { startTestInference } from './support/helpers';

const help = () =>
  parseOptionHelp(
    execFileSync('ffmpeg', ['-hide_banner', '-h', 'full'], { encoding: 'utf8', maxBuffer: 64 << 20 }),
  );

describe('decoder preflight', () => {
  it('accepts the installed ffmpeg and ffprobe with every option we pass', async () => {
    expect(await checkDecoder('ffmpeg', 'ffprobe')).toMatchObject({ ok: true });
  }, 60_000);

  it('reports a missing ffmpeg or ffprobe', async () => {
    expect(await checkDecoder('/nonexistent/ffmpeg', 'ffprobe')).toEqual({
      ok: false,
      reason: 'ffmpeg is not installed or does not run',
    });
    expect(await checkDecoder('ffmpeg', '/nonexistent/ffprobe')).toEqual({
      ok: false,
      reason: 'ffprobe is not installed or does not run',
    });
  });

  it('finds an option a source kind does not take (the RTSP demuxer has no -rw_timeout)', () => {
    const real = help();
    expect(real.get('RTSP demuxer')?.has('timeout')).toBe(true);
    expect(real.get('RTSP demuxer')?.has('rw_timeout')).toBe(false);
    expect(checkOptionSupport(real)).toBeUndefined();
    // An ffmpeg whose RTSP demuxer lacks -timeout (or reads it as "listen", like ffmpeg 4) is refused.
    const without = new Map(real);
    const rtsp = new Map(real.get('RTSP demuxer'));
    rtsp.delete('timeout');
    without.set('RTSP demuxer', rtsp);
    expect(checkOptionSupport(without)).toBe('ffmpeg does not accept -timeout for rtsp inputs');
    rtsp.set('timeout', '<int> .D... set maximum timeout (in seconds) to wait for incoming connections');
    expect(checkOptionSupport(without)).toMatch(/RTSP demuxer -timeout does not mean/);
  });
});

describe('inference without a working decoder', () => {
  it('is not ready, says so in the scene list and refuses video jobs (images still work)', async () => {
    const svc = await startTestInference({ FFMPEG_PATH: '/nonexistent/ffmpeg' });
    try {
      const ready = await request(svc.parts.app).get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.dependencies.decoder).toEqual({
        status: 'down',
        error: 'video decoding unavailable: ffmpeg is not installed or does not run',
      });
      expect(svc.parts.jobs.videoStatus()).toEqual({
        video_enabled: false,
        video_reason: 'video decoding unavailable: ffmpeg is not installed or does not run',
      });
      const out = await svc.parts.jobs.submit({
        job_id: 'no-decoder',
        scene_code: 'person_vehicle',
        source: { type: 'stream', url: 'rtsp://127.0.0.1:1/cam' },
      });
      expect(out).toEqual({ outcome: 'rejected', reason: expect.stringMatching(/^decoder_unavailable: /) });
    } finally {
      await svc.close();
    }
  }, 120_000);
});
