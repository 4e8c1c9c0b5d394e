/**
 * Reads an RTSP server-to-client byte stream the way FFmpeg's RTSP client reads it, so that the relay in
 * front of ffmpeg and ffprobe decides on the same messages ffmpeg will act on. Pure (no I/O); fed chunk by
 * chunk, split anywhere.
 *
 * FFmpeg's reader (libavformat/rtsp.c: `ff_rtsp_read_reply`, `ff_rtsp_parse_line`, `ff_rtsp_skip_packet`,
 * `ff_rtsp_tcp_read_packet`), which this mirrors:
 * - A line ends at LF alone; every CR is dropped wherever it is; at most 4095 bytes of a line are kept.
 * - A `$` as the first kept byte of a line is an interleaved frame: `$`, channel, 16-bit length, payload.
 *   While streaming, a frame shorter than 8 bytes is not skipped: its payload is read as message text.
 * - An empty line ends a head (an empty first line is a whole message). NUL ends a C string early.
 * - First line: words split on space and tab; if the first starts with `RTSP/` (any version), the status is
 *   `atoi` of the second (leading zeros, signs, trailing junk and 64-bit wrap-around all accepted). Any
 *   300..399 makes ffmpeg open the reply's `Location` itself. Otherwise the message is a request.
 * - `Content-Length:` only at the start of a header line, any case; its value is `strtol`'s; the last wins.
 *
 * Where ffmpeg's reading is loose, this is strict: a message is refused, and nothing after it passes,
 * when it is a 3xx, or when ffmpeg could read it differently from the canonical reading: a status that is
 * not three digits, a NUL, a line longer than ffmpeg keeps, a frame inside a head or shorter than 8 bytes,
 * a Content-Length that is not plain digits at the start of its line, given twice, or a head over 64 KiB.
 */
const MAX_LINE = 4095;
const MAX_HEAD = 64 * 1024;
const MIN_FRAME = 8;
const LF = 0x0a;
const CR = 0x0d;
const DOLLAR = 0x24;

export class RtspReplyWatch {
  /** Why the stream was refused, once it was. */
  refusal: string | undefined;
  private readonly line = Buffer.alloc(MAX_LINE);
  private lineLength = 0;
  private lineCount = 0;
  private headBytes = 0;
  private contentLength: number | undefined;
  /** Bytes of a frame's payload or a message's body still to pass without reading. */
  private skip = 0;
  /** Bytes of a frame's header (channel, length) still to read, and the length so far. */
  private frameHeader = 0;
  private frameLength = 0;

  /** True when the stream must be cut before `chunk` is delivered: it was refused (see `refusal`). */
  push(chunk: Buffer): boolean {
    if (this.refusal !== undefined) return true;
    let i = 0;
    while (i < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - i);
        this.skip -= n;
        i += n;
        continue;
      }
      const byte = chunk[i++] as number;
      if (this.frameHeader > 0) {
        this.readFrameHeader(byte);
      } else {
        this.readHeadByte(byte);
      }
      if (this.refusal !== undefined) return true;
    }
    return false;
  }

  private refuse(why: string): void {
    this.refusal = why;
  }

  private readFrameHeader(byte: number): void {
    this.frameHeader--;
    if (this.frameHeader < 2) this.frameLength = this.frameLength * 256 + byte;
    if (this.frameHeader > 0) return;
    if (this.frameLength < MIN_FRAME) return this.refuse('an interleaved frame shorter than ffmpeg skips');
    this.skip = this.frameLength;
  }

  private readHeadByte(byte: number): void {
    if (byte === LF) return this.endLine();
    if (++this.headBytes > MAX_HEAD) return this.refuse('a message head over 64 KiB');
    if (byte === DOLLAR && this.lineLength === 0) {
      if (this.lineCount > 0) return this.refuse('an interleaved frame inside a message head');
      this.frameHeader = 3;
      this.frameLength = 0;
      this.headBytes = 0;
      return;
    }
    if (byte === CR) return;
    if (byte === 0) return this.refuse('a NUL byte in a message head');
    if (this.lineLength >= MAX_LINE) return this.refuse('a line longer than ffmpeg reads');
    this.line[this.lineLength++] = byte;
  }

  private endLine(): void {
    if (this.lineLength === 0) {
      // An empty line ends the head; an empty first line is a message of its own, with no body.
      this.skip = this.lineCount > 0 ? (this.contentLength ?? 0) : 0;
      this.lineCount = 0;
      this.headBytes = 0;
      this.contentLength = undefined;
      return;
    }
    const text = this.line.toString('latin1', 0, this.lineLength);
    this.lineLength = 0;
    if (this.lineCount++ === 0) this.readStartLine(text);
    else this.readHeaderLine(text);
  }

  private readStartLine(text: string): void {
    const [first = '', second = ''] = text.split(/[ \t]+/).filter((w) => w !== '');
    if (!first.startsWith('RTSP/')) return; // a request from the server: ffmpeg answers it and reads on
    if (!/^[0-9]{3}$/.test(second)) return this.refuse('a status line ffmpeg could read differently');
    const status = Number(second);
    if (status >= 300 && status < 400) this.refuse(`a ${status} redirect`);
  }

  private readHeaderLine(text: string): void {
    if (!/^\s*content-length\s*:/i.test(text)) return;
    const m = /^content-length:[ \t]*([0-9]{1,9})[ \t]*$/i.exec(text);
    if (!m) return this.refuse('a Content-Length ffmpeg could read differently');
    if (this.contentLength !== undefined) return this.refuse('a second Content-Length');
    this.contentLength = Number(m[1]);
  }
}
