import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { decoderCommand, decoderEnv } from '@vision/shared';
import {
  isErrorLine,
  parseDurationLine,
  parseShowinfoLine,
  scrubDecoderLine,
  type ShowinfoFrame,
} from './ffmpeg-log';

/** One sampled frame as ffmpeg delivered it: letterboxed planar canvas plus what showinfo said about it. */
export interface SourceFrame {
  /** The G, B and R planes (gbrp). */
  planes: Buffer;
  /** Presentation time in ms (NaN when ffmpeg gave none). */
  ptsMs: number;
  /** Original frame size. */
  width: number;
  height: number;
  /** Unix ms when the frame came out of ffmpeg. */
  capturedAt: number;
}

export interface SourceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Input duration in seconds; null for a live input (Duration: N/A); undefined if never reported. */
  duration: number | null | undefined;
  frames: number;
  /** Last error-looking stderr line, without URLs or paths (for logs and classification only). */
  lastError?: string;
  /** Presentation time of the last frame, ms (NaN when none). */
  lastPtsMs: number;
  killed: boolean;
}

export interface FrameSourceOptions {
  ffmpegPath: string;
  args: string[];
  /** Paths the decoder may read besides the system's files (a local input file); nothing else is reachable. */
  read?: string[];
  /** Bytes per output frame (size*size*3). */
  frameBytes: number;
  /**
   * Live sources: ffmpeg is killed when no frame came out for this long while it still runs (an HLS
   * origin restarted with its media sequence back at 0 leaves ffmpeg reloading a playlist it waits on,
   * without an error and without frames, for as long as the old sequence was; read timeouts never fire).
   */
  stallMs?: number;
  onFrame(frame: SourceFrame): void;
}

const MAX_LINE = 4096;
/** Frame buffers kept for reuse (frames in detection at once are handed back one by one). */
const MAX_FREE = 4;

/**
 * Runs ffmpeg and splits its stdout into frames, pairing the n-th frame with the n-th showinfo line
 * of stderr. `pause()` stops reading stdout so ffmpeg blocks on the pipe (back-pressure).
 */
export class FfmpegFrameSource {
  readonly done: Promise<SourceExit>;
  private readonly child: ChildProcessByStdio<null, Readable, Readable>;
  private readonly infos: ShowinfoFrame[] = [];
  private readonly pending: Buffer[] = [];
  /** Frame buffers handed back by `recycle()`, filled again before a new one is allocated. */
  private readonly free: Buffer[] = [];
  private partial: Buffer;
  private filled = 0;
  private frames = 0;
  private duration: number | null | undefined;
  private lastError?: string;
  private killed = false;
  private stalled = false;
  private paused = false;

  constructor(private readonly opts: FrameSourceOptions) {
    this.partial = Buffer.allocUnsafe(opts.frameBytes);
    const cmd = decoderCommand(opts.ffmpegPath, opts.args, opts.read);
    this.child = spawn(cmd.file, cmd.args, { stdio: ['ignore', 'pipe', 'pipe'], env: decoderEnv() });
    this.child.stdout.on('data', (chunk: Buffer) => this.onStdout(chunk));
    let lineBuf = '';
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (s: string) => {
      lineBuf += s;
      let nl: number;
      while ((nl = lineBuf.search(/[\r\n]/)) >= 0) {
        this.onLine(lineBuf.slice(0, nl));
        lineBuf = lineBuf.slice(nl + 1);
      }
      if (lineBuf.length > MAX_LINE) lineBuf = lineBuf.slice(-MAX_LINE);
    });
    if (opts.stallMs) this.watchStalls(opts.stallMs);
    this.done = new Promise((resolve) => {
      let spawnError: Error | undefined;
      this.child.on('error', (err) => {
        spawnError = err;
      });
      this.child.on('close', (code, signal) => {
        if (lineBuf) this.onLine(lineBuf);
        this.flush(true);
        resolve({
          code,
          signal,
          duration: this.duration,
          frames: this.frames,
          lastPtsMs: this.lastPtsMs,
          lastError: spawnError
            ? `ffmpeg could not start: ${spawnError.message}`
            : this.stalled
              ? `no frame for ${this.opts.stallMs} ms (stalled)`
              : this.lastError,
          killed: this.killed,
        });
      });
    });
  }

  /** Kills ffmpeg when no frame came out for `stallMs` (never while paused: that is our back-pressure). */
  private watchStalls(stallMs: number): void {
    let last = Date.now();
    let seen = this.frames;
    const timer = setInterval(
      () => {
        if (this.frames !== seen || this.paused) {
          seen = this.frames;
          last = Date.now();
        } else if (Date.now() - last >= stallMs) {
          this.stalled = true;
          this.kill();
        }
      },
      Math.min(1000, stallMs),
    );
    timer.unref();
    this.child.once('close', () => clearInterval(timer));
  }

  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.child.stdout.pause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.child.stdout.resume();
  }

  /**
   * Hands a frame's `planes` back once nothing reads it any more: a later frame is written into it. A new
   * 0.5 MB buffer per frame (416 px) kept the garbage collector busy on the event loop of a file job.
   */
  recycle(planes: Buffer): void {
    if (planes.length === this.opts.frameBytes && this.free.length < MAX_FREE && !this.free.includes(planes))
      this.free.push(planes);
  }

  kill(): void {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.killed = true;
    this.child.stdout.resume();
    this.child.kill('SIGKILL');
  }

  private onLine(raw: string): void {
    const line = raw.slice(0, MAX_LINE);
    const info = parseShowinfoLine(line);
    if (info) {
      this.infos.push(info);
      this.flush(false);
      return;
    }
    if (this.duration === undefined) {
      const d = parseDurationLine(line);
      if (d !== undefined) this.duration = d;
    }
    if (!line.includes('showinfo') && isErrorLine(line)) this.lastError = scrubDecoderLine(line.trim());
  }

  private onStdout(chunk: Buffer): void {
    let off = 0;
    const size = this.opts.frameBytes;
    while (off < chunk.length) {
      const n = Math.min(size - this.filled, chunk.length - off);
      chunk.copy(this.partial, this.filled, off, off + n);
      this.filled += n;
      off += n;
      if (this.filled === size) {
        this.pending.push(this.partial);
        this.partial = this.free.pop() ?? Buffer.allocUnsafe(size);
        this.filled = 0;
      }
    }
    this.flush(false);
  }

  /** Emits frames that have their showinfo line (all of them at exit, reusing the last known size). */
  private flush(atExit: boolean): void {
    while (this.pending.length > 0 && (this.infos.length > 0 || atExit)) {
      const planes = this.pending.shift() as Buffer;
      const info = this.infos.shift();
      const last = this.lastInfo;
      if (info) this.lastInfo = info;
      const use = info ?? last;
      if (!use) continue; // no size known: cannot place boxes
      this.frames++;
      if (info && Number.isFinite(info.ptsTime)) this.lastPtsMs = Math.round(info.ptsTime * 1000);
      this.opts.onFrame({
        planes,
        ptsMs: info ? Math.round(info.ptsTime * 1000) : NaN,
        width: use.width,
        height: use.height,
        capturedAt: Date.now(),
      });
    }
  }

  private lastInfo?: ShowinfoFrame;
  private lastPtsMs = NaN;
}
