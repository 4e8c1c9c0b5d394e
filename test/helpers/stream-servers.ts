/**
 * Real stream servers for the live tests, started from the repo's scripts (scripts/stack/live/) on
 * loopback ports picked here: GStreamer's gst-rtsp-server, nginx with its RTMP module, nginx serving
 * live HLS (ffmpeg's hls muxer) and a progressive MP4 over http and https. The sources are the
 * camera-like clips that scripts/stack/live/media.sh encodes into the stack cache (never the repo).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../scripts/distributed/ports';

const LIVE_SCRIPTS = path.resolve(__dirname, '../../scripts/stack/live');

let mediaDir: string | undefined;
/** The camera-like clips (camera.mp4, camera.ts), encoded once into the cache. */
export function cameraMedia(): { mp4: string; ts: string; longMp4: string } {
  mediaDir ??= execFileSync('bash', [path.join(LIVE_SCRIPTS, 'media.sh')], { encoding: 'utf8' }).trim();
  return {
    mp4: path.join(mediaDir, 'camera.mp4'),
    ts: path.join(mediaDir, 'camera.ts'),
    longMp4: path.join(mediaDir, 'camera-long.mp4'),
  };
}

/**
 * A loopback TCP port that was free a moment ago, of the range of the stack's set of servers in use
 * (scripts/distributed/ports.js): a stream server takes a second or more to start listening, and a run beside
 * this one picks from ranges of its own.
 */
export { freePort };

export type StreamServerKind = 'rtsp' | 'rtsp-auth' | 'rtmp' | 'http';

export interface StreamServer {
  kind: StreamServerKind;
  port: number;
  /** TLS port (http only). */
  tlsPort?: number;
  /** Starts the server (again, on the same ports). Resolves once it prints `ready`. */
  start(): Promise<void>;
  /** Stops it (SIGTERM to the script, which stops its servers and feeders). */
  stop(): Promise<void>;
  running: boolean;
}

export const RTSP_USER = 'camuser';
export const RTSP_PASS = 'cam p@ss:1';

/** Creates (does not start) a stream server of `kind`. */
export async function streamServer(
  kind: StreamServerKind,
  opts: { address?: string; port?: number } = {},
): Promise<StreamServer> {
  const media = cameraMedia();
  const port = opts.port ?? (await freePort());
  const tlsPort = kind === 'http' ? await freePort() : undefined;
  const dir = mkdtempSync(path.join(os.tmpdir(), `vision-${kind}-`));
  const command = (): [string, string[]] => {
    switch (kind) {
      case 'rtsp':
      case 'rtsp-auth':
        return [
          '/usr/bin/python3',
          [
            path.join(LIVE_SCRIPTS, 'rtsp-server.py'),
            '--port',
            String(port),
            '--clip',
            media.ts,
            '--address',
            opts.address ?? '127.0.0.1',
            ...(kind === 'rtsp-auth' ? ['--auth', `${RTSP_USER}:${RTSP_PASS}`] : []),
          ],
        ];
      case 'rtmp':
        return [
          'bash',
          [
            path.join(LIVE_SCRIPTS, 'rtmp-server.sh'),
            '--port',
            String(port),
            '--clip',
            media.ts,
            '--dir',
            dir,
          ],
        ];
      case 'http':
        return [
          'bash',
          [
            path.join(LIVE_SCRIPTS, 'http-server.sh'),
            '--port',
            String(port),
            '--tls-port',
            String(tlsPort),
            '--mp4',
            media.longMp4,
            '--hls',
            media.ts,
            '--dir',
            dir,
          ],
        ];
    }
  };
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const server: StreamServer = {
    kind,
    port,
    tlsPort,
    running: false,
    async start() {
      if (child) return;
      const [cmd, args] = command();
      const c = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      child = c;
      exited = new Promise((r) => c.once('exit', () => r()));
      let err = '';
      c.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${kind} server did not start: ${err}`)), 60_000);
        c.stdout?.on('data', (d: Buffer) => {
          if (d.toString().includes('ready ')) {
            clearTimeout(timer);
            resolve();
          }
        });
        c.once('exit', (code) => {
          clearTimeout(timer);
          // A later start() tries again.
          if (child === c) child = undefined;
          reject(new Error(`${kind} server exited (${code}): ${err}`));
        });
      });
      server.running = true;
    },
    async stop() {
      const c = child;
      if (!c) return;
      child = undefined;
      server.running = false;
      c.kill('SIGTERM');
      const killer = setTimeout(() => c.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
  process.once('exit', () => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  return server;
}

/** The URLs a test gives the service for each scheme. */
export function streamUrls(s: StreamServer): Record<string, string> {
  switch (s.kind) {
    case 'rtsp':
      return { rtsp: `rtsp://127.0.0.1:${s.port}/cam` };
    case 'rtsp-auth':
      return {
        rtsp: `rtsp://${encodeURIComponent(RTSP_USER)}:${encodeURIComponent(RTSP_PASS)}@127.0.0.1:${s.port}/cam`,
      };
    case 'rtmp':
      return { rtmp: `rtmp://127.0.0.1:${s.port}/live/cam` };
    case 'http':
      return {
        hls: `http://127.0.0.1:${s.port}/live/cam.m3u8`,
        http: `http://127.0.0.1:${s.port}/camera.mp4`,
        https: `https://127.0.0.1:${s.tlsPort}/camera.mp4`,
      };
  }
}
