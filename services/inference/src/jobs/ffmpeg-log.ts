/** Parsers for ffmpeg's stderr (pure). */

export interface ShowinfoFrame {
  n: number;
  ptsTime: number;
  width: number;
  height: number;
}

const SHOWINFO_RE =
  /\[Parsed_showinfo_\d+ @ [^\]]+\]\s+n:\s*(\d+)\s+pts:\s*(-?\d+|NOPTS)\s+pts_time:\s*(-?[\d.e+-]+|NOPTS)\s.*?\bs:(\d+)x(\d+)/;

/** One showinfo frame line -> its index, presentation time in seconds and frame size. */
export function parseShowinfoLine(line: string): ShowinfoFrame | undefined {
  const m = SHOWINFO_RE.exec(line);
  if (!m) return undefined;
  const ptsTime = m[3] === 'NOPTS' ? NaN : Number(m[3]);
  return { n: Number(m[1]), ptsTime, width: Number(m[4]), height: Number(m[5]) };
}

/** `Duration: 00:00:03.42, ...` -> seconds; `Duration: N/A` -> null (a live input); other lines -> undefined. */
export function parseDurationLine(line: string): number | null | undefined {
  const m = /^\s*Duration:\s*(N\/A|(\d+):(\d{2}):(\d{2}(?:\.\d+)?))/.exec(line);
  if (!m) return undefined;
  if (m[1] === 'N/A') return null;
  return Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4]);
}

/** Lines ffmpeg prints when something went wrong, worth keeping as the failure reason. */
export function isErrorLine(line: string): boolean {
  return /error|invalid|failed|refused|not found|timed out|unable|no such|denied|unsupported|broken pipe|end of file/i.test(
    line,
  );
}

/** Removes URLs and absolute paths from an ffmpeg line before it is logged. */
export function scrubDecoderLine(line: string): string {
  return line
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '<url>')
    .replace(/(^|[\s'"(=])\/[^\s:'")]+/g, '$1<path>')
    .slice(0, 300);
}
