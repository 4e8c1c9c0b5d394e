/**
 * HLS through the egress proxy with the real ffmpeg: a playlist may list segments on any host, and
 * ffmpeg fetches them itself, after every check made on the stream URL. With `-http_proxy` each of
 * those connections is address-checked by the proxy when it is made.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startEgressProxy, type EgressProxy, type Logger } from '@vision/shared';
import { ffmpegArgs } from '../src/jobs/ffmpeg-args';

jest.setTimeout(60_000);

const SIZE = 64;

/** Runs ffmpeg with the job's arguments; resolves with the number of frames it wrote. */
function decode(input: string, httpProxy: string): Promise<number> {
  const args = ffmpegArgs({
    input,
    kind: 'http',
    live: true,
    sampleFps: 5,
    size: SIZE,
    ioTimeoutMs: 5000,
    httpProxy,
  });
  return new Promise((resolve) => {
    const child = spawn('ffmpeg', args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let bytes = 0;
    child.stdout.on('data', (c: Buffer) => (bytes += c.length));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('close', () => {
      clearTimeout(timer);
      resolve(Math.floor(bytes / (SIZE * SIZE * 3)));
    });
  });
}

describe('HLS through the egress proxy', () => {
  let dir: string;
  let segment: Buffer;
  let origin: http.Server;
  let base: string;
  /** The playlist the origin serves: set per test. */
  let playlist = '';
  const originHits: string[] = [];
  const refused: unknown[] = [];
  let proxy: EgressProxy;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hls-egress-'));
    const seg = path.join(dir, 'seg.ts');
    execFileSync('ffmpeg', [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=160x120:rate=10',
      '-t',
      '2',
      '-f',
      'mpegts',
      seg,
    ]);
    segment = readFileSync(seg);
    origin = http.createServer((req, res) => {
      originHits.push(req.url ?? '');
      if (req.url === '/live.m3u8') {
        res.setHeader('content-type', 'application/vnd.apple.mpegurl');
        res.end(playlist);
      } else if (req.url === '/seg.ts') {
        res.setHeader('content-type', 'video/mp2t');
        res.end(segment);
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
    const logger = { warn: (o: unknown) => refused.push(o) } as unknown as Logger;
    // Private networks open (the origin is on loopback), as in development; cloud metadata stays closed.
    proxy = await startEgressProxy({ allowPrivate: true, logger });
  });
  afterAll(async () => {
    await proxy.close();
    await new Promise<void>((r) => origin.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    originHits.length = 0;
    refused.length = 0;
  });

  const playlistOf = (...segments: string[]) =>
    `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n${segments.map((s) => `#EXTINF:2.0,\n${s}\n`).join('')}#EXT-X-ENDLIST\n`;

  it('decodes an HLS stream whose playlist and segments pass the check', async () => {
    playlist = playlistOf(`${base}/seg.ts`);
    const frames = await decode(`${base}/live.m3u8`, proxy.url);
    expect(frames).toBeGreaterThanOrEqual(8); // 2 s at 5 fps
    expect(originHits).toEqual(expect.arrayContaining(['/live.m3u8', '/seg.ts']));
    expect(refused).toHaveLength(0);
  });

  it('refuses a segment listed on a cloud metadata address, at connect time', async () => {
    playlist = playlistOf('http://169.254.169.254/latest/meta-data/seg.ts');
    const frames = await decode(`${base}/live.m3u8`, proxy.url);
    expect(frames).toBe(0);
    expect(originHits).toEqual(['/live.m3u8']);
    expect(refused).toEqual(expect.arrayContaining([expect.objectContaining({ host: '169.254.169.254' })]));
  });
});
