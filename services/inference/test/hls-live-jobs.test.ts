/** @jest-environment ./services/inference/test/support/onnx-environment.js */
/**
 * Live HLS jobs with the real ffmpeg (through the egress proxy): whether a job may end `succeeded` is
 * decided from what the URL served at its first look (net/playlist.ts), never from ffmpeg's exit status.
 * A live playlist whose server restarts and serves a stale, finished playlist (EXT-X-ENDLIST, as ffmpeg's
 * hls muxer leaves it when it is stopped) keeps the job running and reconnecting; a VOD playlist ends
 * `succeeded`; a stop ends the job at once. An origin restarted with its media sequence back at 0 (ffmpeg
 * then waits, without an error, for the old sequence number) gets its stalled decoder restarted.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startTestInference, type TestInference } from './support/helpers';

jest.setTimeout(120_000);

let svc: TestInference;
let dir: string;
let segments: Buffer[];
let origin: http.Server;
let base: string;
/** What /cam.m3u8 serves: a sliding live window, a finished (stale) playlist, or a VOD playlist. */
let mode: 'live' | 'stale' | 'vod' = 'live';
/** The live window's first media sequence number, counted in seconds from `liveSince`. */
let seqBase = 0;
let liveSince = Date.now();

const entries = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => `#EXTINF:1.0,\nseg-${(from + i) % segments.length}.ts\n`).join('');

function playlist(): string {
  const head = '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n';
  if (mode === 'vod') return `${head}#EXT-X-MEDIA-SEQUENCE:0\n${entries(0, 4)}#EXT-X-ENDLIST\n`;
  if (mode === 'stale') return `${head}#EXT-X-MEDIA-SEQUENCE:0\n${entries(0, 3)}#EXT-X-ENDLIST\n`;
  const seq = seqBase + Math.floor((Date.now() - liveSince) / 1000);
  return `${head}#EXT-X-MEDIA-SEQUENCE:${seq}\n${entries(seq, 3)}`;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'hls-live-'));
  execFileSync('ffmpeg', [
    ...['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10', '-t', '8'],
    ...['-c:v', 'libx264', '-g', '10', '-f', 'hls', '-hls_time', '1', '-hls_list_size', '0'],
    ...['-hls_segment_filename', path.join(dir, 'seg-%d.ts'), path.join(dir, 'made.m3u8')],
  ]);
  const names = readdirSync(dir).filter((n) => /^seg-\d+\.ts$/.test(n));
  segments = names.map((_, i) => readFileSync(path.join(dir, `seg-${i}.ts`)));
  origin = http.createServer((req, res) => {
    const seg = /^\/seg-(\d+)\.ts$/.exec(req.url ?? '');
    if (req.url === '/cam.m3u8') {
      res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl', 'cache-control': 'no-cache' });
      res.end(playlist());
    } else if (seg && segments[Number(seg[1])]) {
      res.writeHead(200, { 'content-type': 'video/mp2t' });
      res.end(segments[Number(seg[1])]);
    } else res.writeHead(404).end();
  });
  await new Promise<void>((r) => origin.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  svc = await startTestInference({
    STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
    INFERENCE_STREAM_GIVEUP_MS: '60000',
    INFERENCE_RECONNECT_MIN_MS: '200',
    INFERENCE_RECONNECT_MAX_MS: '500',
  });
});
afterAll(async () => {
  await svc?.close();
  await new Promise<void>((r) => origin.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

describe('live HLS jobs', () => {
  it('a live playlist never ends succeeded: a restarted server serving a finished playlist is reconnected to', async () => {
    mode = 'live';
    const c = svc.collector;
    const sub = await svc.parts.jobs.submit({
      job_id: 'hls-live',
      scene_code: 'person_vehicle',
      source: { type: 'stream', url: `${base}/cam.m3u8` },
      sample_fps: 2,
    });
    expect(sub.outcome).toBe('accepted');
    await c.waitFor(() => c.frames('hls-live').length >= 4, 60_000, 'first frames');
    // The server "restarts": for a while it serves the stale playlist its stopped muxer finished.
    mode = 'stale';
    const reconnects = svc.parts.jobs.get('hls-live')?.reconnects ?? 0;
    await c.waitFor(
      () => (svc.parts.jobs.get('hls-live')?.reconnects ?? 0) >= reconnects + 2,
      60_000,
      'reconnects while the stale playlist is served',
    );
    expect(svc.parts.jobs.get('hls-live')?.status).toBe('running');
    mode = 'live';
    const before = c.frames('hls-live').length;
    await c.waitFor(() => c.frames('hls-live').length >= before + 4, 60_000, 'frames after the restart');
    expect(svc.parts.jobs.get('hls-live')?.status).toBe('running');
    const stoppedAt = Date.now();
    expect(svc.parts.jobs.stop('hls-live')?.status).toBe('stopped');
    const end = await c.waitForEnd('hls-live', 10_000);
    expect(end.status).toBe('stopped');
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
  });

  it('a finished (VOD) playlist ends succeeded once its last segment is decoded', async () => {
    mode = 'vod';
    const sub = await svc.parts.jobs.submit({
      job_id: 'hls-vod',
      scene_code: 'person_vehicle',
      source: { type: 'stream', url: `${base}/cam.m3u8` },
      sample_fps: 2,
    });
    expect(sub.outcome).toBe('accepted');
    const end = await svc.collector.waitForEnd('hls-vod', 60_000);
    expect(end.status).toBe('succeeded');
    // Read as fast as it comes (a playlist is never paced), a live job drops frames while it is behind.
    expect(end.frames).toBeGreaterThanOrEqual(1);
  });

  it('an origin restarted with its media sequence back at 0: the stalled decoder is restarted, frames resume', async () => {
    mode = 'live';
    seqBase = 1000;
    liveSince = Date.now();
    const c = svc.collector;
    await svc.parts.jobs.submit({
      job_id: 'hls-reset',
      scene_code: 'person_vehicle',
      source: { type: 'stream', url: `${base}/cam.m3u8` },
      sample_fps: 2,
    });
    await c.waitFor(() => c.frames('hls-reset').length >= 4, 60_000, 'first frames');
    // The origin restarts: its sequence starts again at 0 (ffmpeg would wait ~1000 s for number 1004).
    seqBase = 0;
    liveSince = Date.now();
    const reset = Date.now();
    await c.waitFor(
      () => c.frames('hls-reset').some((f) => f.frame_time_ms > reset + 5_000),
      60_000,
      'frames after the sequence went back',
    );
    expect(svc.parts.jobs.get('hls-reset')).toMatchObject({ status: 'running' });
    expect(svc.parts.jobs.get('hls-reset')?.reconnects).toBeGreaterThanOrEqual(1);
    svc.parts.jobs.stop('hls-reset');
    expect((await c.waitForEnd('hls-reset', 10_000)).status).toBe('stopped');
  });
});
