/** A live MPEG-TS stream over HTTP for the inference tests (each request gets an ffmpeg playing a clip in a loop). */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { VIDEOS_DIR } from './helpers';

export const CLIP = path.join(VIDEOS_DIR, 'pedestrians_vtest_opencv_10s.mov');

/** A live MPEG-TS stream over HTTP: each request gets an ffmpeg that plays the clip in a loop in real time. */
export class LiveHttpStream {
  private server?: http.Server;
  private readonly children = new Set<ChildProcess>();
  private readonly sockets = new Set<Socket>();
  private open = 0;
  /** The most responses streaming at once (two readers of one job: a make-before-break handover). */
  maxOpen = 0;
  port = 0;
  private requests = 0;

  /** `laterAnswerMs`: every request after the first is answered this much later (a slow stream server). */
  constructor(private readonly laterAnswerMs = 0) {}

  async start(port = 0): Promise<void> {
    const server = http.createServer((req, res) => {
      const wait = this.requests++ > 0 ? this.laterAnswerMs : 0;
      const timer = setTimeout(() => this.play(res), wait);
      req.on('close', () => clearTimeout(timer));
    });
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  private play(res: http.ServerResponse): void {
    if (res.destroyed) return;
    const ff = spawn(
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
        'mpegts',
        'pipe:1',
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    this.children.add(ff);
    ff.on('close', () => this.children.delete(ff));
    res.writeHead(200, { 'content-type': 'video/mp2t' });
    ff.stdout?.pipe(res);
    this.maxOpen = Math.max(this.maxOpen, ++this.open);
    res.on('close', () => {
      this.open--;
      ff.kill('SIGKILL');
    });
  }

  /** Kills the server mid-stream: connections are cut and the port is closed. */
  async kill(): Promise<void> {
    for (const c of this.children) c.kill('SIGKILL');
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/live.ts`;
  }
}
