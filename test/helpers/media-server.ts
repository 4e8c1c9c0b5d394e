import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MediaServer {
  /** Base URL, e.g. http://127.0.0.1:1234 */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves clips for stream tasks from the test itself:
 * - `/file/<name>` the file as is (progressive HTTP, with Content-Length): a finite stream;
 * - `/live/<name>` an endless MPEG-TS stream at real-time pace (ffmpeg -re, looped), one ffmpeg per client.
 */
export async function startMediaServer(
  files: Record<string, string>,
  /** Sees each request first (its headers, what reached the stream host). */
  onRequest?: (req: http.IncomingMessage) => void,
): Promise<MediaServer> {
  const children = new Set<ChildProcess>();
  const server = http.createServer((req, res) => {
    onRequest?.(req);
    const m = /^\/(file|live)\/([^/?]+)/.exec(req.url ?? '');
    const file = m ? files[m[2]] : undefined;
    if (!m || !file) {
      res.writeHead(404).end();
      return;
    }
    if (m[1] === 'file') {
      // Like any web server: byte ranges, so that players can seek (a MOV's index may sit at the end).
      const size = statSync(file).size;
      const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
      let start = 0;
      let end = size - 1;
      if (range && (range[1] || range[2])) {
        start = range[1] ? Number(range[1]) : Math.max(0, size - Number(range[2]));
        end = range[1] && range[2] ? Math.min(Number(range[2]), size - 1) : size - 1;
        if (start >= size || start > end) {
          res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
          return;
        }
        res.writeHead(206, {
          'content-type': 'video/mp4',
          'accept-ranges': 'bytes',
          'content-range': `bytes ${start}-${end}/${size}`,
          'content-length': end - start + 1,
        });
      } else {
        res.writeHead(200, { 'content-type': 'video/mp4', 'accept-ranges': 'bytes', 'content-length': size });
      }
      if (req.method === 'HEAD') return void res.end();
      createReadStream(file, { start, end }).pipe(res);
      return;
    }
    res.writeHead(200, { 'content-type': 'video/mp2t' });
    if (req.method === 'HEAD') return void res.end();
    const ff = spawn(
      'ffmpeg',
      [
        '-loglevel',
        'error',
        '-re',
        '-stream_loop',
        '-1',
        '-i',
        file,
        '-an',
        '-c',
        'copy',
        '-f',
        'mpegts',
        'pipe:1',
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    children.add(ff);
    ff.stdout.pipe(res);
    const stop = () => {
      ff.kill('SIGKILL');
      children.delete(ff);
    };
    res.on('close', stop);
    ff.on('exit', () => res.end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    async close() {
      for (const c of children) c.kill('SIGKILL');
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/**
 * Polls `fn` until it returns a value that is not undefined, or fails after `timeoutMs`. With VISION_TEST_WAITS=1
 * each wait prints how long it took to stderr (`[wait] 12.3 s: <what>`): where a slow test's time goes.
 */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> {
  const started = Date.now();
  const until = started + timeoutMs;
  let last: unknown;
  while (Date.now() < until) {
    try {
      const v = await fn();
      if (v !== undefined) {
        if (process.env.VISION_TEST_WAITS === '1')
          process.stderr.write(`[wait] ${((Date.now() - started) / 1000).toFixed(1)} s: ${what}\n`);
        return v;
      }
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}
