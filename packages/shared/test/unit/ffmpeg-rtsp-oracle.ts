/**
 * A test oracle: how FFmpeg's RTSP client reads a server's byte stream while it connects, written from
 * libavformat/rtsp.c (`ff_rtsp_read_reply` with `return_on_interleaved_data` 0, `ff_rtsp_skip_packet`,
 * `ff_rtsp_parse_line`, `get_word`) and glibc's `atoi`/`strtol` on a 64-bit machine. It shares no code
 * with the relay's reader, so the tests compare two independent readings.
 */
const SPACE_CHARS = ' \t\r\n';
const LONG_MAX = (1n << 63n) - 1n;
const LONG_MIN = -(1n << 63n);

/** glibc strtol(s, NULL, 10), then the conversion to a C int. */
function strtolInt(s: string): number {
  let i = 0;
  while (i < s.length && ' \t\n\v\f\r'.includes(s[i]!)) i++;
  let negative = false;
  if (s[i] === '+' || s[i] === '-') negative = s[i++] === '-';
  let value = 0n;
  while (i < s.length && s[i]! >= '0' && s[i]! <= '9') value = value * 10n + BigInt(s.charCodeAt(i++) - 48);
  if (negative) value = -value;
  if (value > LONG_MAX) value = LONG_MAX;
  if (value < LONG_MIN) value = LONG_MIN;
  return Number(BigInt.asIntN(32, value));
}

/** get_word: skips SPACE_CHARS, then takes up to the next one; keeps at most size - 1 characters. */
function getWord(text: string, at: number, size: number): [string, number] {
  let p = at;
  while (p < text.length && SPACE_CHARS.includes(text[p]!)) p++;
  const start = p;
  while (p < text.length && !SPACE_CHARS.includes(text[p]!)) p++;
  return [text.slice(start, Math.min(p, start + size - 1)), p];
}

export interface FfmpegMessage {
  /** The reply's status as ffmpeg reads it; 0 for a request from the server or an empty message. */
  status: number;
  /** Index of the LF that ended the message's first line. */
  lineEnd: number;
}

/** Every message ffmpeg reads from `stream`, in order, while it connects (frames skipped). */
export function ffmpegStatuses(stream: Buffer): FfmpegMessage[] {
  const out: FfmpegMessage[] = [];
  let i = 0;
  const skipPacket = () => {
    if (i + 3 > stream.length) return false;
    const len = stream.readUInt16BE(i + 1);
    i += 3 + len;
    return true;
  };
  for (;;) {
    let lineCount = 0;
    let status = 0;
    let contentLength = 0;
    let lineEnd = -1;
    for (;;) {
      const line: number[] = [];
      for (;;) {
        if (i >= stream.length) return out;
        const ch = stream[i++]!;
        if (ch === 0x0a) break;
        if (ch === 0x24 && line.length === 0) {
          if (!skipPacket()) return out;
        } else if (ch !== 0x0d && line.length < 4095) line.push(ch);
      }
      const nul = line.indexOf(0);
      const text = Buffer.from(nul >= 0 ? line.slice(0, nul) : line).toString('latin1');
      if (lineCount === 0) lineEnd = i - 1;
      if (text === '') break;
      if (lineCount === 0) {
        const [first, p] = getWord(text, 0, 1024);
        if (first.startsWith('RTSP/')) status = strtolInt(getWord(text, p, 1024)[0]);
      } else if (text.slice(0, 15).toLowerCase() === 'content-length:') {
        contentLength = strtolInt(text.slice(15));
      }
      lineCount++;
    }
    out.push({ status, lineEnd });
    if (contentLength > 0) i += contentLength;
  }
}
