/** Syntax and protocol rules for `stream_url` (SPEC.md 4.1). Pure: no resolution, no connection. */
import { redactText, refusedRtspOption } from '@vision/shared';

export const STREAM_SCHEMES = ['http', 'https', 'rtsp', 'rtmp'] as const;
export type StreamScheme = (typeof STREAM_SCHEMES)[number];

export const DEFAULT_PORTS: Record<StreamScheme, number> = { http: 80, https: 443, rtsp: 554, rtmp: 1935 };

export const MAX_STREAM_URL_LENGTH = 2048;

export interface ParsedStreamUrl {
  /** The URL as given (normalised by WHATWG parsing); carries user information, never log it. */
  href: string;
  scheme: StreamScheme;
  /** Host name or IP literal without brackets. */
  host: string;
  port: number;
  /** Safe to log and show. */
  redacted: string;
}

export type StreamUrlCheck = { ok: true; url: ParsedStreamUrl } | { ok: false; problem: string };

export function parseStreamUrl(raw: unknown): StreamUrlCheck {
  if (typeof raw !== 'string' || raw.trim() === '') return { ok: false, problem: 'stream_url is required' };
  if (raw.length > MAX_STREAM_URL_LENGTH)
    return { ok: false, problem: `stream_url is longer than ${MAX_STREAM_URL_LENGTH} characters` };
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(raw))
    return { ok: false, problem: 'stream_url contains whitespace or controls' };
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { ok: false, problem: 'stream_url is not a valid URL' };
  }
  const scheme = u.protocol.slice(0, -1).toLowerCase();
  if (!(STREAM_SCHEMES as readonly string[]).includes(scheme))
    return { ok: false, problem: `stream_url scheme must be one of ${STREAM_SCHEMES.join(', ')}` };
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!host) return { ok: false, problem: 'stream_url has no host' };
  const option = refusedRtspOption(u);
  if (option) return { ok: false, problem: `stream_url RTSP option ${option} is not supported (TCP only)` };
  const s = scheme as StreamScheme;
  const port = u.port ? Number(u.port) : DEFAULT_PORTS[s];
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    return { ok: false, problem: 'stream_url port is invalid' };
  return { ok: true, url: { href: u.href, scheme: s, host, port, redacted: redactText(u.href) } };
}
