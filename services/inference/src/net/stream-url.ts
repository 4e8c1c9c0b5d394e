import { checkHostAddresses, refusedRtspOption, type HostResolver } from '@vision/shared';

export type StreamScheme = 'http' | 'https' | 'rtsp' | 'rtmp';
const SCHEMES: readonly StreamScheme[] = ['http', 'https', 'rtsp', 'rtmp'];

export type StreamUrlCheck = { ok: true; url: URL; scheme: StreamScheme } | { ok: false; reason: string };

/** Syntax check of a stream URL: a supported scheme and a host. Pure. */
export function parseStreamUrl(raw: string): StreamUrlCheck {
  if (raw.length > 2048) return { ok: false, reason: 'stream url too long' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'stream url is not a valid URL' };
  }
  const scheme = url.protocol.replace(/:$/, '') as StreamScheme;
  if (!SCHEMES.includes(scheme))
    return { ok: false, reason: `unsupported stream scheme (use ${SCHEMES.join(', ')})` };
  if (!url.hostname) return { ok: false, reason: 'stream url has no host' };
  const option = refusedRtspOption(url);
  if (option) return { ok: false, reason: `rtsp option ${option} is not supported (TCP only)` };
  if ([...raw].some((ch) => ch.charCodeAt(0) <= 0x20 || ch.charCodeAt(0) === 0x7f))
    return { ok: false, reason: 'stream url contains control characters' };
  return { ok: true, url, scheme };
}

/** Every address of a host name (the shared resolver type; tests inject their own). */
export type Resolver = HostResolver;

export type AddressCheck = { ok: true; addresses: string[] } | { ok: false; reason: string };

/**
 * Resolves the host and refuses it when any address is not public (loopback, private, link-local,
 * multicast, unspecified, cloud metadata, reserved), unless private networks are allowed: the same
 * policy as the tasks service's check at creation. Private-network mode never opens cloud metadata.
 */
export async function checkStreamHost(
  hostname: string,
  opts: { allowPrivate: boolean; resolve?: Resolver },
): Promise<AddressCheck> {
  const check = await checkHostAddresses(hostname, opts);
  if (check.ok) return check;
  if (check.unresolvable)
    return {
      ok: false,
      reason: check.timedOut ? 'stream host did not resolve in time' : 'stream host does not resolve',
    };
  return { ok: false, reason: `stream host resolves to a ${check.refused.cls} address (refused)` };
}
