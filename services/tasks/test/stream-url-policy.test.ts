import { classifyAddress, embeddedIpv4, firstRefused } from '@vision/shared';
import { parseStreamUrl } from '../src/domain/stream-url';

describe('address classifier', () => {
  test.each([
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.1.1', 'link_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['169.254.169.254', 'cloud_metadata'],
    ['fd00:ec2::254', 'cloud_metadata'],
    ['100.100.100.200', 'cloud_metadata'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'cloud_metadata'],
    ['::ffff:7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'cloud_metadata'],
    ['2002:c0a8:0101::1', 'private'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['not-an-ip', 'invalid'],
  ])('%s is %s', (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });

  test('embedded IPv4 forms', () => {
    expect(embeddedIpv4('::ffff:10.0.0.1')).toBe('10.0.0.1');
    expect(embeddedIpv4('2001:4860::1')).toBeUndefined();
  });

  test('private-network mode opens private ranges but never metadata, multicast or unspecified', () => {
    expect(firstRefused(['8.8.8.8', '10.0.0.1'], false)).toEqual({ address: '10.0.0.1', cls: 'private' });
    expect(firstRefused(['127.0.0.1', '10.0.0.1', '::1'], true)).toBeUndefined();
    expect(firstRefused(['127.0.0.1', '169.254.169.254'], true)?.cls).toBe('cloud_metadata');
    expect(firstRefused(['224.0.0.1'], true)?.cls).toBe('multicast');
    expect(firstRefused(['0.0.0.0'], true)?.cls).toBe('unspecified');
  });
});

describe('stream URL syntax', () => {
  test.each([
    ['http://cam.example.com/live.mp4', 'http', 80],
    ['https://cam.example.com:8443/x', 'https', 8443],
    ['rtsp://user:p%40ss@cam.example.com/stream1', 'rtsp', 554],
    ['rtmp://live.example.com/app/key', 'rtmp', 1935],
    ['RTSP://[2001:db8::1]:8554/s', 'rtsp', 8554],
  ])('%s is accepted', (url, scheme, port) => {
    const r = parseStreamUrl(url);
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.url.scheme).toBe(scheme);
      expect(r.url.port).toBe(port);
      expect(r.url.redacted).not.toContain('p%40ss');
    }
  });

  test.each([
    [undefined],
    [''],
    ['   '],
    [42],
    ['ftp://example.com/x'],
    ['file:///etc/passwd'],
    ['udp://1.2.3.4:1234'],
    ['concat:http://a|http://b'],
    ['http://'],
    ['not a url'],
    ['http://exa mple.com/'],
    ['http://example.com/\nx'],
    [`http://example.com/${'a'.repeat(3000)}`],
  ])('%p is refused', (url) => {
    expect(parseStreamUrl(url).ok).toBe(false);
  });

  test('user information is kept for the backend and redacted for display', () => {
    const r = parseStreamUrl('rtsp://admin:secret@cam.example.com/s');
    expect(r.ok && r.url.href).toBe('rtsp://admin:secret@cam.example.com/s');
    expect(r.ok && r.url.redacted).toBe('rtsp://***@cam.example.com/s');
  });
});
