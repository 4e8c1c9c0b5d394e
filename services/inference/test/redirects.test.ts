import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pinnedFetch } from '@vision/shared';
import { type RedirectOptions, resolveRedirects } from '../src/net/redirects';
import { ffmpegArgs } from '../src/jobs/ffmpeg-args';

/** A real HTTP server with a small redirect chain; names resolve through an injected resolver. */
describe('redirect walking for http(s) streams', () => {
  let server: http.Server;
  let port: number;
  const seen: { path: string; auth?: string }[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push({ path: req.url ?? '', auth: req.headers.authorization });
      if (req.url === '/a') return void res.writeHead(302, { location: '/b' }).end();
      if (req.url === '/b')
        return void res.writeHead(301, { location: `http://public.example:${port}/c` }).end();
      if (req.url === '/to-metadata')
        return void res.writeHead(302, { location: 'http://169.254.169.254/latest' }).end();
      if (req.url === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
      res.writeHead(200, { 'content-type': 'video/mp2t' });
      res.write(Buffer.alloc(1024));
      // An endless body: the walker must not wait for it.
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  // public.example "resolves" to this machine only for the test; its policy class comes from the resolver answer.
  const resolve = async (host: string) => (host === 'public.example' ? ['127.0.0.1'] : ['127.0.0.1']);

  it('follows hops, checks each, and keeps credentials on the original origin only', async () => {
    seen.length = 0;
    const r = await resolveRedirects(`http://user:p%40ss@127.0.0.1:${port}/a`, {
      allowPrivate: true,
      resolve,
    });
    expect(r).toMatchObject({ ok: true, url: `http://public.example:${port}/c` });
    expect(seen.map((s) => s.path)).toEqual(['/a', '/b', '/c']);
    expect(seen[0].auth).toBe(`Basic ${Buffer.from('user:p@ss').toString('base64')}`);
    expect(seen[2].auth).toBeUndefined();
  });

  it('refuses a hop to a forbidden address before contacting it', async () => {
    seen.length = 0;
    const resolvePublic = async (host: string) =>
      host === '169.254.169.254' ? ['169.254.169.254'] : ['8.8.8.8'];
    // The first hop is checked as public (8.8.8.8) but dialled on loopback through the injected fetch.
    const fetchImpl: RedirectOptions['fetchImpl'] = (input, _addresses, init) =>
      pinnedFetch(input.replace(/^http:\/\/[^/]+/, `http://127.0.0.1:${port}`), ['127.0.0.1'], init);
    const r = await resolveRedirects('http://cdn.example/to-metadata', {
      allowPrivate: false,
      resolve: resolvePublic,
      fetchImpl,
    });
    expect(r.ok).toBe(false);
    expect(r.ok === false && r.refused).toBe(true);
    expect(seen.map((s) => s.path)).toEqual(['/to-metadata']);
  });

  it('gives up on redirect loops', async () => {
    const r = await resolveRedirects(`http://127.0.0.1:${port}/loop`, {
      allowPrivate: true,
      resolve,
      maxHops: 3,
    });
    expect(r).toMatchObject({ ok: false, refused: false });
  });

  it('refuses a loopback stream when private networks are not allowed', async () => {
    const r = await resolveRedirects(`http://127.0.0.1:${port}/c`, { allowPrivate: false });
    expect(r).toMatchObject({ ok: false, refused: true });
  });

  it('never lets ffmpeg follow redirects itself', () => {
    const args = ffmpegArgs({ input: 'http://h/x', kind: 'http', live: true, sampleFps: 5, size: 416 });
    expect(args.join(' ')).toContain('-max_redirects 0');
  });
});
