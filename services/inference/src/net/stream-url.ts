import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { firstRefused } from '@vision/shared';

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
  if ([...raw].some((ch) => ch.charCodeAt(0) <= 0x20 || ch.charCodeAt(0) === 0x7f))
    return { ok: false, reason: 'stream url contains control characters' };
  return { ok: true, url, scheme };
}

export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) =>
  (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

export type AddressCheck = { ok: true; addresses: string[] } | { ok: false; reason: string };

/**
 * Resolves the host and refuses it when any address is not public (loopback, private, link-local,
 * multicast, unspecified, cloud metadata, reserved), unless private networks are allowed.
 */
export async function checkStreamHost(
  hostname: string,
  opts: { allowPrivate: boolean; resolve?: Resolver },
): Promise<AddressCheck> {
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = await (opts.resolve ?? systemResolver)(host);
    } catch {
      return { ok: false, reason: 'stream host does not resolve' };
    }
  }
  if (addresses.length === 0) return { ok: false, reason: 'stream host does not resolve' };
  // The same policy as the tasks service's check at creation (packages/shared/src/address-policy.ts):
  // private-network mode opens private, loopback and link-local ranges, never cloud metadata.
  const bad = firstRefused(addresses, opts.allowPrivate);
  if (bad) return { ok: false, reason: `stream host resolves to a ${bad.cls} address (refused)` };
  return { ok: true, addresses };
}
