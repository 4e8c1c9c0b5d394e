import { classifyAddress } from '@vision/shared';
import { checkStreamHost, parseStreamUrl } from '../../src/net/stream-url';
import { ffmpegArgs, letterboxFilter } from '../../src/jobs/ffmpeg-args';
import { isErrorLine, parseDurationLine, parseShowinfoLine } from '../../src/jobs/ffmpeg-log';

describe('address classification', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['169.254.169.254', 'cloud_metadata'],
    ['169.254.1.1', 'link_local'],
    ['224.0.0.1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'cloud_metadata'],
    ['fe80::1', 'link_local'],
    ['fd12:3456::1', 'private'],
    ['fd00:ec2::254', 'cloud_metadata'],
    ['ff02::1', 'multicast'],
    ['2001:4860:4860::8888', 'public'],
    ['2001:db8::1', 'reserved'],
    ['example.com', 'invalid'],
  ])('%s is %s', (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });

  it('checks every resolved address of a stream host', async () => {
    const resolve = async () => ['93.184.216.34', '10.0.0.5'];
    expect(await checkStreamHost('cam.example', { allowPrivate: false, resolve })).toEqual({
      ok: false,
      reason: 'stream host resolves to a private address (refused)',
    });
    expect((await checkStreamHost('cam.example', { allowPrivate: true, resolve })).ok).toBe(true);
    expect((await checkStreamHost('[::1]', { allowPrivate: false })).ok).toBe(false);
    expect(
      await checkStreamHost('x.invalid', {
        allowPrivate: false,
        resolve: async () => {
          throw new Error('ENOTFOUND');
        },
      }),
    ).toEqual({ ok: false, reason: 'stream host does not resolve' });
  });

  it('accepts only http, https, rtsp and rtmp URLs', () => {
    expect(parseStreamUrl('rtsp://user:pw@cam.example:554/s').ok).toBe(true);
    for (const bad of ['file:///etc/passwd', 'concat:a|b', 'ftp://x/y', 'not a url', 'http://a b/'])
      expect(parseStreamUrl(bad).ok).toBe(false);
  });
});

describe('ffmpeg arguments and log parsing', () => {
  it('limits protocols to the scheme, uses TCP for RTSP and letterboxes to 416 with pad 114', () => {
    const rtsp = ffmpegArgs({ input: 'rtsp://h/s', kind: 'rtsp', live: true, sampleFps: 5, size: 416 });
    expect(rtsp.slice(rtsp.indexOf('-protocol_whitelist'), rtsp.indexOf('-protocol_whitelist') + 2)).toEqual([
      '-protocol_whitelist',
      'rtsp,rtp,tcp',
    ]);
    expect(rtsp).toEqual(expect.arrayContaining(['-rtsp_transport', 'tcp', 'pipe:1', 'rawvideo', 'gbrp']));
    // The RTSP demuxer takes -timeout (socket I/O); -rw_timeout made every RTSP job fail.
    expect(rtsp[rtsp.indexOf('-timeout') + 1]).toBe('10000000');
    expect(rtsp).not.toContain('-rw_timeout');
    const rtmp = ffmpegArgs({ input: 'rtmp://h/a/s', kind: 'rtmp', live: true, sampleFps: 5, size: 416 });
    expect(rtmp).toContain('-rw_timeout');
    expect(rtmp).not.toContain('-timeout');
    const proxied = ffmpegArgs({
      input: 'https://h/live.m3u8',
      kind: 'https',
      live: true,
      sampleFps: 5,
      size: 416,
      httpProxy: 'http://127.0.0.1:9999',
    });
    expect(proxied[proxied.indexOf('-protocol_whitelist') + 1]).toBe('https,tls,tcp,httpproxy');
    expect(proxied[proxied.indexOf('-http_proxy') + 1]).toBe('http://127.0.0.1:9999');
    // RTSP and RTMP have no HTTP proxy: their address is checked before ffmpeg starts.
    expect(
      ffmpegArgs({
        input: 'rtsp://h/s',
        kind: 'rtsp',
        live: true,
        sampleFps: 5,
        size: 416,
        httpProxy: 'http://p',
      }),
    ).not.toContain('-http_proxy');
    const file = ffmpegArgs({ input: '/data/x.mp4', kind: 'file', live: false, sampleFps: 2, size: 416 });
    expect(file[file.indexOf('-protocol_whitelist') + 1]).toBe('file');
    expect(file).not.toContain('-rw_timeout');
    expect(letterboxFilter(5, 416)).toBe(
      "fps=5,showinfo=checksum=0,scale=w='round(iw*min(416/iw,416/ih))':h='round(ih*min(416/iw,416/ih))':flags=bilinear,format=bgr24,format=gbrp,pad=416:416:0:0:color=0x727272",
    );
  });

  it('parses showinfo frame lines, durations and error lines', () => {
    const line =
      '[Parsed_showinfo_1 @ 0x564c7fc99200] n:   3 pts:      3 pts_time:0.6     pos:    18663 fmt:yuv420p sar:0/1 s:480x270 i:P iskey:0 type:P checksum:2EC9444E';
    expect(parseShowinfoLine(line)).toEqual({ n: 3, ptsTime: 0.6, width: 480, height: 270 });
    expect(
      parseShowinfoLine('[Parsed_showinfo_1 @ 0x1] config in time_base: 1/5, frame_rate: 5/1'),
    ).toBeUndefined();
    expect(parseDurationLine('  Duration: 00:01:03.42, start: 0.000000, bitrate: 152 kb/s')).toBeCloseTo(
      63.42,
      6,
    );
    expect(parseDurationLine('  Duration: N/A, start: 1.4, bitrate: N/A')).toBeNull();
    expect(parseDurationLine('Stream #0:0')).toBeUndefined();
    expect(isErrorLine('http://127.0.0.1:1/x: Connection refused')).toBe(true);
  });
});
