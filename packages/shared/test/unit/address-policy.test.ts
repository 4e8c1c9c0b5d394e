import { classifyAddress, firstRefused } from '../../src';

describe('address policy: IPv6 prefixes that carry IPv4', () => {
  it.each([
    // well-known NAT64 (RFC 6052): the embedded IPv4 decides
    ['64:ff9b::8.8.8.8', 'public'],
    ['64:ff9b::808:808', 'public'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::169.254.1.1', 'link_local'],
    ['64:ff9b::a9fe:a9fe', 'cloud_metadata'],
    ['64:ff9b::0.0.0.0', 'unspecified'],
  ])('well-known NAT64 %s is %s', (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });

  it.each([
    // local-use NAT64 (RFC 8215): the operator's translator, never public
    ['64:ff9b:1::8.8.8.8', 'private'],
    ['64:ff9b:1::10.0.0.1', 'private'],
    ['64:ff9b:1:ffff::1', 'private'],
    // cloud metadata in each place an RFC 6052 prefix of /48, /56, /64 or /96 puts the IPv4
    ['64:ff9b:1::169.254.169.254', 'cloud_metadata'],
    ['64:ff9b:1:a9fe:a9:fea9::', 'cloud_metadata'],
    ['64:ff9b:1:a9:fe:a9fe::', 'cloud_metadata'],
    ['64:ff9b:1:0:a9:fea9:fe00:0', 'cloud_metadata'],
  ])('local-use NAT64 %s is %s', (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });

  it.each([
    // Teredo (RFC 4380): server IPv4 in bits 32-63, client IPv4 inverted in the last 32 bits
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
    ['2001::1', 'reserved'],
    ['2001:0:a9fe:a9fe::1', 'cloud_metadata'],
    ['2001:0:4136:e378::5601:5601', 'cloud_metadata'],
    // neighbours of 2001::/32 stay public
    ['2001:1::1', 'public'],
    ['2001:4860:4860::8888', 'public'],
  ])('Teredo %s is %s', (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });

  it('refuses local-use NAT64 and Teredo by default, and metadata in them even with private networks allowed', () => {
    for (const ip of ['64:ff9b:1::8.8.8.8', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '64:ff9b::10.0.0.1']) {
      expect(firstRefused([ip], false)).toEqual({ address: ip, cls: classifyAddress(ip) });
      expect(firstRefused([ip], true)).toBeUndefined();
    }
    expect(firstRefused(['64:ff9b:1::169.254.169.254'], true)?.cls).toBe('cloud_metadata');
    expect(firstRefused(['2001:0:a9fe:a9fe::1'], true)?.cls).toBe('cloud_metadata');
    expect(firstRefused(['64:ff9b::8.8.8.8'], false)).toBeUndefined();
  });
});
