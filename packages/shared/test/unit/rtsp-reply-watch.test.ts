import { RtspReplyWatch } from '../../src/index';
import { ffmpegStatuses } from './ffmpeg-rtsp-oracle';

/**
 * The relay's reader against an oracle written from FFmpeg's own reader (ffmpeg-rtsp-oracle.ts), over a
 * generated set of reply heads. The same shapes against a real ffprobe: test/rtsp-relay-ffprobe.test.ts.
 */
const bytes = (s: string) => Buffer.from(s, 'latin1');
const frame = (payload: string, channel = 0) =>
  Buffer.concat([Buffer.from([0x24, channel, payload.length >> 8, payload.length & 0xff]), bytes(payload)]);
const RTP = '\x80\x60\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01RTSP/1.0 302 Found\r\n\r\n';

/** Byte index after which the watch refused, feeding `stream` in pieces of `piece` bytes; -1 if never. */
function refusedAt(stream: Buffer, piece: number): number {
  const w = new RtspReplyWatch();
  for (let at = 0; at < stream.length; at += piece) {
    if (w.push(stream.subarray(at, at + piece))) return at;
  }
  return -1;
}

function redirect(opts: { version?: string; status?: string; eol?: string; lead?: string; sep?: string }) {
  const eol = opts.eol ?? '\r\n';
  return bytes(
    `${opts.lead ?? ''}${opts.version ?? 'RTSP/1.0'}${opts.sep ?? ' '}${opts.status ?? '302'} Found${eol}` +
      `CSeq: 2${eol}Location: rtsp://127.0.0.2:8554/cam${eol}${eol}`,
  );
}

const ok = (cseq: number, body = '') =>
  bytes(`RTSP/1.0 200 OK\r\nCSeq: ${cseq}\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
const sdp = 'v=0\r\no=- 0 0 IN IP4 0.0.0.0\r\nm=video 0 RTP/AVP 96\r\na=control:rtsp://10.0.0.1/x\r\n';

describe('RtspReplyWatch', () => {
  it('refuses the four reply shapes ffmpeg follows that the old reader passed', () => {
    for (const shape of [
      redirect({ eol: '\n' }),
      redirect({ status: '0302' }),
      redirect({ lead: ' ' }),
      redirect({ version: 'RTSP/1.00' }),
    ]) {
      expect(ffmpegStatuses(shape).some((s) => s.status >= 300 && s.status < 400)).toBe(true);
      expect(refusedAt(shape, shape.length)).toBe(0);
    }
  });

  // Every combination of line ends, leading space, version, separator and status spelling, after each
  // kind of traffic that can come before it.
  const eols = ['\r\n', '\n', '\r\r\n', '\n\r'];
  const leads = ['', ' ', '\t', '\r'];
  const versions = ['RTSP/1.0', 'RTSP/1.00', 'RTSP/2.0', 'RTSP/', 'RTSP/x.y'];
  const seps = [' ', '\t', ' \t '];
  const statuses = [
    '301',
    '302',
    '0302',
    '+302',
    '302x',
    ' 302',
    '4294967598',
    '-4294966994',
    '\x0b302',
    '399',
  ];
  const befores: [string, Buffer][] = [
    ['nothing', Buffer.alloc(0)],
    ['a reply with a body', ok(1, sdp)],
    ['an interleaved frame', frame(RTP)],
    ['an empty line', bytes('\r\n')],
    ['a request from the server', bytes('OPTIONS * RTSP/1.0\r\nCSeq: 7\r\n\r\n')],
  ];

  it('refuses every generated redirect shape before its status line is delivered, split anywhere', () => {
    let cases = 0;
    for (const eol of eols)
      for (const lead of leads)
        for (const version of versions)
          for (const sep of seps)
            for (const status of statuses)
              for (const [, before] of befores) {
                const stream = Buffer.concat([before, redirect({ eol, lead, version, sep, status })]);
                const read = ffmpegStatuses(stream);
                const followed = read.find((r) => r.status >= 300 && r.status < 400);
                // Every shape here is one ffmpeg follows: the oracle agrees, or the generator is wrong.
                expect({ status, followed: followed !== undefined }).toEqual({ status, followed: true });
                // Whole, in pieces of 7 and, for one case in 5, byte by byte.
                for (const piece of cases % 5 === 0 ? [stream.length, 7, 1] : [stream.length, 7]) {
                  const at = refusedAt(stream, piece);
                  expect(at).toBeGreaterThanOrEqual(0);
                  expect(at).toBeLessThanOrEqual(followed!.lineEnd);
                }
                cases++;
              }
    expect(cases).toBe(eols.length * leads.length * versions.length * seps.length * statuses.length * 5);
  });

  it('refuses what ffmpeg could read otherwise: frames, NULs, long lines, loose or repeated lengths', () => {
    const refused = [
      // A frame shorter than 8 bytes: ffmpeg's streaming reader reads its payload as message text.
      Buffer.concat([frame('RTSP/'), bytes('1.0 200 OK\r\nLocation: rtsp://127.0.0.2/\r\n\r\n')]),
      // A frame inside a head: skipped while connecting, ends the message while streaming.
      bytes('RTSP/1.0 200 OK\r\nCSeq: 1\r\n$\x00\x00\x08RTP-RTP-\r\n\r\n'),
      bytes('RTSP/1.0 200 OK\r\nX-A: b\x00\r\n\r\n'),
      bytes(`RTSP/1.0 200 OK\r\nX-Long: ${'a'.repeat(5000)}\r\n\r\n`),
      bytes('RTSP/1.0 200 OK\r\nContent-Length: 5x\r\n\r\nhello'),
      bytes('RTSP/1.0 200 OK\r\nContent-Length : 5\r\n\r\nhello'),
      bytes('RTSP/1.0 200 OK\r\n Content-Length: 5\r\n\r\nhello'),
      bytes('RTSP/1.0 200 OK\r\nContent-Length: 4294967301\r\n\r\nhello'),
      bytes('RTSP/1.0 200 OK\r\nContent-Length: 5\r\nContent-length: 0\r\n\r\nhello'),
      bytes('RTSP/1.0 2000 OK\r\n\r\n'),
      bytes(`RTSP/1.0 200 OK\r\n${'\r'.repeat(70_000)}`),
    ];
    for (const stream of refused) {
      expect(refusedAt(stream, stream.length)).toBe(0);
      expect(refusedAt(stream, 1)).toBeGreaterThanOrEqual(0);
    }
  });

  it('passes what a real server sends: replies with bodies, frames of any size, requests, in any pieces', () => {
    const big = 'x'.repeat(65_535);
    const stream = Buffer.concat([
      ok(1),
      ok(2, sdp),
      bytes(
        'RTSP/1.0 401 Unauthorized\r\nCSeq: 3\r\nWWW-Authenticate: Digest realm="cam", nonce="abc"\r\n\r\n',
      ),
      bytes(
        'RTSP/1.0 200 OK\nCSeq: 4\nTransport: RTP/AVP/TCP;unicast;interleaved=0-1\nSession: 12;timeout=60\n\n',
      ),
      frame(RTP),
      frame(big, 1),
      bytes('GET_PARAMETER rtsp://cam/ RTSP/1.0\r\nCSeq: 9\r\nContent-Length: 17\r\n\r\nRTSP/1.0 302 Moo\n'),
      ok(5),
      frame('\x80'.repeat(8)),
      bytes('\r\n'),
      bytes('RTSP/1.0 454 Session Not Found\r\ncontent-length:0\r\n\r\n'),
    ]);
    expect(ffmpegStatuses(stream).map((r) => r.status)).toEqual([200, 200, 401, 200, 0, 200, 0, 454]);
    for (const piece of [stream.length, 1000, 7, 1]) expect(refusedAt(stream, piece)).toBe(-1);
  });

  it('stays refused once it refused', () => {
    const w = new RtspReplyWatch();
    expect(w.push(redirect({}))).toBe(true);
    expect(w.refusal).toBe('a 302 redirect');
    expect(w.push(ok(3))).toBe(true);
  });
});
