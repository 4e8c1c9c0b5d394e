import net from 'node:net';
import { probeStream } from '../src/probe/ffprobe';
import { guardStreamUrl } from '../src/probe/stream-guard';
import { parseStreamUrl } from '../src/domain/stream-url';
import { startClipServer } from './harness';

let clips: Awaited<ReturnType<typeof startClipServer>>;
beforeAll(async () => {
  clips = await startClipServer();
});
afterAll(() => clips.close());

const parsed = (u: string) => {
  const r = parseStreamUrl(u);
  if (!r.ok) throw new Error(r.problem);
  return r.url;
};

test('real ffprobe finds the video stream of a clip served over HTTP', async () => {
  const r = await probeStream(clips.url('pedestrians_vtest_opencv_10s.mov'), 'http', { timeoutMs: 5000 });
  expect(r).toMatchObject({ ok: true });
  if (r.ok) expect(r.width).toBeGreaterThan(0);
});

test('an unreachable address and a non-video body fail the probe', async () => {
  expect((await probeStream('http://127.0.0.1:1/x.mp4', 'http', { timeoutMs: 3000 })).ok).toBe(false);
  expect((await probeStream(clips.url('not-video.txt'), 'http', { timeoutMs: 3000 })).ok).toBe(false);
});

test('the guard refuses loopback unless private networks are allowed, and checks redirect hops', async () => {
  const local = parsed(clips.url('boats_kodak_pan_synth.mp4'));
  expect(await guardStreamUrl(local, { allowPrivate: false, timeoutMs: 2000 })).toMatchObject({
    ok: false,
    reason: 'stream_url_invalid',
  });
  expect((await guardStreamUrl(local, { allowPrivate: true, timeoutMs: 2000 })).ok).toBe(true);
  expect(
    await guardStreamUrl(parsed(clips.url('redirect-to-metadata')), { allowPrivate: true, timeoutMs: 2000 }),
  ).toMatchObject({ ok: false, reason: 'stream_url_invalid' });
});

test('an RTSP reply ffmpeg reads as a redirect, in any spelling, is refused and its target never dialled', async () => {
  let dialled = 0;
  const internal = net.createServer((s) => {
    dialled++;
    s.destroy();
  });
  await new Promise<void>((r) => internal.listen(0, '127.0.0.2', r));
  const location = `rtsp://127.0.0.2:${(internal.address() as net.AddressInfo).port}/internal`;
  const shapes = [
    (c: string) => `RTSP/1.0 302 Found\nCSeq: ${c}\nLocation: ${location}\n\n`,
    (c: string) => `RTSP/1.0 0302 Found\r\nCSeq: ${c}\r\nLocation: ${location}\r\n\r\n`,
    (c: string) => ` RTSP/1.0 302 Found\r\nCSeq: ${c}\r\nLocation: ${location}\r\n\r\n`,
    (c: string) => `RTSP/1.00 302 Found\r\nCSeq: ${c}\r\nLocation: ${location}\r\n\r\n`,
  ];
  try {
    for (const shape of shapes) {
      const server = net.createServer((sock) => {
        sock.on('error', () => undefined);
        sock.on('data', (d) => sock.write(shape(/CSeq:\s*(\d+)/i.exec(d.toString())?.[1] ?? '1')));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const port = (server.address() as net.AddressInfo).port;
      try {
        const r = await probeStream(`rtsp://cam.example:${port}/cam`, 'rtsp', {
          timeoutMs: 5000,
          pin: '127.0.0.1',
          port,
        });
        expect(r).toMatchObject({
          ok: false,
          refused: true,
          problem: expect.stringMatching(/^the stream's RTSP server sent .+ \(refused\)$/),
        });
      } finally {
        await new Promise<void>((r) => server.close(() => r()));
      }
    }
    expect(dialled).toBe(0);
  } finally {
    await new Promise<void>((r) => internal.close(() => r()));
  }
}, 60_000);
