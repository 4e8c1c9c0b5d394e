/**
 * Which network addresses a stream URL may point at (SSRF policy). Pure: takes resolved IP literals,
 * never resolves anything itself.
 */
import { BlockList, isIP } from 'node:net';

export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'multicast'
  | 'unspecified'
  | 'cloud_metadata'
  | 'reserved'
  | 'invalid';

interface Range {
  net: string;
  prefix: number;
  cls: Exclude<AddressClass, 'public' | 'invalid'>;
}

/** Checked in order: the first range that contains the address names its class. */
const V4_RANGES: Range[] = [
  { net: '169.254.169.254', prefix: 32, cls: 'cloud_metadata' }, // AWS, GCP, Azure, OpenStack, DigitalOcean
  { net: '169.254.170.2', prefix: 32, cls: 'cloud_metadata' }, // AWS ECS task metadata
  { net: '100.100.100.200', prefix: 32, cls: 'cloud_metadata' }, // Alibaba Cloud
  { net: '192.0.0.192', prefix: 32, cls: 'cloud_metadata' }, // Oracle Cloud
  { net: '0.0.0.0', prefix: 8, cls: 'unspecified' },
  { net: '127.0.0.0', prefix: 8, cls: 'loopback' },
  { net: '10.0.0.0', prefix: 8, cls: 'private' },
  { net: '172.16.0.0', prefix: 12, cls: 'private' },
  { net: '192.168.0.0', prefix: 16, cls: 'private' },
  { net: '100.64.0.0', prefix: 10, cls: 'private' }, // carrier-grade NAT
  { net: '169.254.0.0', prefix: 16, cls: 'link_local' },
  { net: '224.0.0.0', prefix: 4, cls: 'multicast' },
  { net: '192.0.0.0', prefix: 24, cls: 'reserved' },
  { net: '192.0.2.0', prefix: 24, cls: 'reserved' },
  { net: '198.18.0.0', prefix: 15, cls: 'reserved' },
  { net: '198.51.100.0', prefix: 24, cls: 'reserved' },
  { net: '203.0.113.0', prefix: 24, cls: 'reserved' },
  { net: '240.0.0.0', prefix: 4, cls: 'reserved' }, // includes 255.255.255.255
];

const V6_RANGES: Range[] = [
  { net: 'fd00:ec2::254', prefix: 128, cls: 'cloud_metadata' }, // AWS IMDS over IPv6
  { net: '::', prefix: 128, cls: 'unspecified' },
  { net: '::1', prefix: 128, cls: 'loopback' },
  { net: 'fc00::', prefix: 7, cls: 'private' }, // unique local
  { net: 'fe80::', prefix: 10, cls: 'link_local' },
  { net: 'fec0::', prefix: 10, cls: 'private' }, // deprecated site-local
  { net: 'ff00::', prefix: 8, cls: 'multicast' },
  { net: '100::', prefix: 64, cls: 'reserved' }, // discard-only
  { net: '2001:db8::', prefix: 32, cls: 'reserved' }, // documentation
  { net: '::', prefix: 96, cls: 'reserved' }, // deprecated IPv4-compatible
];

function listOf(ranges: Range[], type: 'ipv4' | 'ipv6'): { list: BlockList; cls: Range['cls'] }[] {
  return ranges.map((r) => {
    const list = new BlockList();
    list.addSubnet(r.net, r.prefix, type);
    return { list, cls: r.cls };
  });
}

const V4 = listOf(V4_RANGES, 'ipv4');
const V6 = listOf(V6_RANGES, 'ipv6');

/** Expands an IPv6 literal (optionally with a trailing dotted IPv4 and a zone) to 16 bytes. */
export function ipv6Bytes(address: string): number[] | undefined {
  let a = address.split('%')[0];
  if (isIP(a) !== 6) return undefined;
  const tail: number[] = [];
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (v4) {
    tail.push(...v4[1].split('.').map(Number));
    a = `${a.slice(0, -v4[1].length)}0:0`;
  }
  const [head, rest] = a.split('::');
  const h = head ? head.split(':') : [];
  const r = rest !== undefined && rest !== '' ? rest.split(':') : [];
  const missing = 8 - h.length - r.length;
  const groups = [...h, ...(rest !== undefined ? Array(missing).fill('0') : []), ...r].map((g) =>
    parseInt(g, 16),
  );
  const bytes = groups.flatMap((g) => [g >> 8, g & 0xff]);
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes.length === 16 ? bytes : undefined;
}

/** The IPv4 address an IPv6 address carries for IPv4 traffic (mapped, NAT64, 6to4), if any. */
export function embeddedIpv4(address: string): string | undefined {
  const b = ipv6Bytes(address);
  if (!b) return undefined;
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (translated)
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return b.slice(12, 16).join('.');
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0)
    return b.slice(12, 16).join('.');
  // 64:ff9b::/96 NAT64 well-known prefix
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12))
    return b.slice(12, 16).join('.');
  // 2002:AABB:CCDD::/48 6to4
  if (b[0] === 0x20 && b[1] === 0x02) return b.slice(2, 6).join('.');
  return undefined;
}

const dotted = (b: number[]): string => b.join('.');

/**
 * Prefixes whose IPv4 part cannot be read with certainty, refused unless private networks are allowed:
 *  - 64:ff9b:1::/48, local-use NAT64 (RFC 8215): the operator's own translator, which may reach private
 *    IPv4; its prefix may be /48, /56, /64 or /96 (RFC 6052 §2.2), so the IPv4 part may sit in any of four
 *    places. Class `private`.
 *  - 2001::/32, Teredo (RFC 4380): a tunnel through a relay to the client's IPv4 (stored inverted in the
 *    last 32 bits) or the server's (bits 32-63). Class `reserved`.
 * A cloud metadata address in any place the IPv4 part may sit makes the address `cloud_metadata`,
 * refused always.
 */
function tunnelClass(b: number[]): AddressClass | undefined {
  let candidates: number[][];
  let cls: AddressClass;
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && b[4] === 0 && b[5] === 1) {
    cls = 'private';
    candidates = [
      [b[6], b[7], b[9], b[10]], // /48
      [b[7], b[9], b[10], b[11]], // /56
      b.slice(9, 13), // /64
      b.slice(12, 16), // /96
    ];
  } else if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) {
    cls = 'reserved';
    candidates = [b.slice(4, 8), b.slice(12, 16).map((x) => x ^ 0xff)];
  } else return undefined;
  return candidates.some((c) => classifyAddress(dotted(c)) === 'cloud_metadata') ? 'cloud_metadata' : cls;
}

/** Classifies one resolved IP literal. */
export function classifyAddress(address: string): AddressClass {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare.split('%')[0]);
  if (family === 4) return V4.find((r) => r.list.check(bare, 'ipv4'))?.cls ?? 'public';
  if (family === 6) {
    const v4 = embeddedIpv4(bare);
    if (v4) return classifyAddress(v4);
    const bytes = ipv6Bytes(bare);
    const tunnel = bytes && tunnelClass(bytes);
    if (tunnel) return tunnel;
    const plain = bare.split('%')[0];
    return V6.find((r) => r.list.check(plain, 'ipv6'))?.cls ?? 'public';
  }
  return 'invalid';
}

/** The first refused address among `addresses` with its class, or undefined when all may be used. */
export function firstRefused(
  addresses: readonly string[],
  allowPrivate: boolean,
): { address: string; cls: AddressClass } | undefined {
  for (const address of addresses) {
    const cls = classifyAddress(address);
    if (cls === 'public') continue;
    // Private-network mode (standalone/dev/tests) opens private, loopback and link-local ranges,
    // never cloud metadata endpoints, multicast or the unspecified address.
    if (
      allowPrivate &&
      (cls === 'private' || cls === 'loopback' || cls === 'link_local' || cls === 'reserved')
    )
      continue;
    return { address, cls };
  }
  return undefined;
}
