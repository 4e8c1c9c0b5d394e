import { isIP } from 'node:net';

/**
 * Classification of IP addresses for the stream-source guard (pure). Anything other than `public`
 * is refused as a stream source unless STREAM_ALLOW_PRIVATE_NETWORKS=true.
 */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'multicast'
  | 'unspecified'
  | 'metadata'
  | 'reserved'
  | 'invalid';

function ipv4Bytes(ip: string): number[] | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4) return undefined;
  const bytes = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : NaN));
  return bytes.every((b) => b >= 0 && b <= 255) ? bytes : undefined;
}

export function classifyIpv4(ip: string): AddressClass {
  const b = ipv4Bytes(ip);
  if (!b) return 'invalid';
  const [a, c] = [b[0], b[1]];
  if (ip === '169.254.169.254' || ip === '100.100.100.200') return 'metadata'; // cloud metadata (AWS/GCP/Azure, Alibaba)
  if (a === 0) return 'unspecified';
  if (a === 127) return 'loopback';
  if (a === 10) return 'private';
  if (a === 172 && c >= 16 && c <= 31) return 'private';
  if (a === 192 && c === 168) return 'private';
  if (a === 100 && c >= 64 && c <= 127) return 'private'; // carrier-grade NAT
  if (a === 169 && c === 254) return 'link-local';
  if (a >= 224 && a <= 239) return 'multicast';
  if (a >= 240) return 'reserved'; // includes broadcast
  if (a === 192 && c === 0 && b[2] === 0) return 'reserved'; // IETF protocol assignments
  if (a === 198 && (c === 18 || c === 19)) return 'reserved'; // benchmarking
  return 'public';
}

/** Expands an IPv6 address to 8 16-bit groups; undefined when malformed. */
function ipv6Groups(ip: string): number[] | undefined {
  let s = ip.split('%')[0].toLowerCase();
  if (s.includes('.')) {
    // Trailing dotted quad (::ffff:1.2.3.4) -> two hex groups.
    const lastColon = s.lastIndexOf(':');
    const v4 = ipv4Bytes(s.slice(lastColon + 1));
    if (!v4) return undefined;
    s = `${s.slice(0, lastColon + 1)}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const parse = (h: string) =>
    h === '' ? [] : h.split(':').map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN));
  const head = parse(halves[0]);
  const rest = halves.length === 2 ? parse(halves[1]) : [];
  if ([...head, ...rest].some((g) => Number.isNaN(g))) return undefined;
  const explicit = head.length + rest.length;
  if (halves.length === 1) return explicit === 8 ? head : undefined;
  if (explicit > 7) return undefined;
  return [...head, ...new Array<number>(8 - explicit).fill(0), ...rest];
}

export function classifyIpv6(ip: string): AddressClass {
  const g = ipv6Groups(ip);
  if (!g) return 'invalid';
  const embeddedV4 = () => `${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}`;
  if (g.every((x) => x === 0)) return 'unspecified';
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return 'loopback';
  // IPv4-mapped ::ffff:a.b.c.d and IPv4-compatible ::a.b.c.d
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0))
    return classifyIpv4(embeddedV4());
  // NAT64 64:ff9b::/96
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0))
    return classifyIpv4(embeddedV4());
  if (g[0] === 0xfd00 && g[1] === 0x0ec2 && g.slice(2, 7).every((x) => x === 0) && g[7] === 0x254)
    return 'metadata'; // AWS IPv6 IMDS
  if ((g[0] & 0xff00) === 0xff00) return 'multicast';
  if ((g[0] & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0] & 0xffc0) === 0xfec0) return 'private'; // deprecated site-local
  if ((g[0] & 0xfe00) === 0xfc00) return 'private'; // unique local fc00::/7
  if (g[0] === 0x2001 && g[1] === 0x0db8) return 'reserved'; // documentation
  if (g[0] === 0x0100 && g.slice(1, 4).every((x) => x === 0)) return 'reserved'; // discard-only
  return 'public';
}

export function classifyAddress(ip: string): AddressClass {
  const v = isIP(ip);
  if (v === 4) return classifyIpv4(ip);
  if (v === 6) return classifyIpv6(ip);
  return 'invalid';
}
