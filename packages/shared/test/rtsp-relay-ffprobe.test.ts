/**
 * The pinned relay against the real ffprobe (Debian's FFmpeg): an RTSP server answers every request with a
 * crafted redirect to a listener that stands for an internal host. Alone, ffprobe follows each shape there;
 * through the relay, nothing reaches it.
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import { startPinnedRelay } from '../src/index';

interface Listener {
  port: number;
  connections: () => number;
  close: () => Promise<void>;
}

async function listen(host: string, onSocket: (s: net.Socket) => void): Promise<Listener> {
  let connections = 0;
  const server = net.createServer((s) => {
    connections++;
    s.on('error', () => undefined);
    onSocket(s);
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => connections,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** An RTSP server that answers each request with `reply(cseq)`, in two writes split at `cut`. */
function redirector(reply: (cseq: string) => string, cut: number) {
  return (sock: net.Socket) => {
    sock.on('data', (d: Buffer) => {
      const text = reply(/CSeq:\s*(\d+)/i.exec(d.toString('latin1'))?.[1] ?? '1');
      sock.write(Buffer.from(text.slice(0, cut), 'latin1'));
      setTimeout(() => {
        if (!sock.destroyed) sock.write(Buffer.from(text.slice(cut), 'latin1'));
      }, 20);
    });
  };
}

/** ffprobe as the tasks service runs it on an RTSP URL; resolves when it exits. */
function ffprobe(url: string): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(
      'ffprobe',
      [
        '-v',
        'error',
        '-protocol_whitelist',
        'rtsp,rtp,tcp',
        '-rtsp_transport',
        'tcp',
        '-timeout',
        '3000000',
        url,
      ],
      { stdio: 'ignore' },
    );
    child.on('error', () => resolve());
    child.on('close', () => resolve());
  });
}

const shapes: [string, (eol: string) => string][] = [
  ['LF-only line ends', () => 'RTSP/1.0 302 Found\nCSeq: %c\nLocation: %l\n\n'],
  ['status 0302', (e) => `RTSP/1.0 0302 Found${e}CSeq: %c${e}Location: %l${e}${e}`],
  ['a space before RTSP/', (e) => ` RTSP/1.0 302 Found${e}CSeq: %c${e}Location: %l${e}${e}`],
  ['version RTSP/1.00', (e) => `RTSP/1.00 302 Found${e}CSeq: %c${e}Location: %l${e}${e}`],
  ['a tab after the version', (e) => `RTSP/1.0\t301 Moved${e}CSeq: %c${e}Location: %l${e}${e}`],
  ['status +302', (e) => `RTSP/1.0 +302 Found${e}CSeq: %c${e}Location: %l${e}${e}`],
  ['status 302x', (e) => `RTSP/1.0 302x Found${e}CSeq: %c${e}Location: %l${e}${e}`],
  ['a status that wraps to 302', (e) => `RTSP/1.0 4294967598 Found${e}CSeq: %c${e}Location: %l${e}${e}`],
  ['a vertical tab before the status', (e) => `RTSP/1.0 \x0b303 See${e}CSeq: %c${e}Location: %l${e}${e}`],
  ['version RTSP/ alone', (e) => `RTSP/ 307 Temporary${e}CSeq: %c${e}Location: %l${e}${e}`],
  ['CRs inside the line', () => 'RTSP/1.0\r 302\r Found\r\nCSeq: %c\r\nLocation: %l\r\n\r\n'],
  ['the canonical redirect', (e) => `RTSP/1.0 302 Found${e}CSeq: %c${e}Location: %l${e}${e}`],
];

describe('the pinned relay in front of ffprobe', () => {
  let internal: Listener;
  beforeAll(async () => {
    internal = await listen('127.0.0.2', (s) => s.destroy());
  });
  afterAll(() => internal.close());

  it.each(shapes)(
    '%s: followed by ffprobe alone, refused through the relay',
    async (_name, shape) => {
      const reply = (cseq: string) =>
        shape('\r\n').replace('%c', cseq).replace('%l', `rtsp://127.0.0.2:${internal.port}/internal`);
      for (const cut of [5, 17]) {
        const server = await listen('127.0.0.1', redirector(reply, cut));
        try {
          const before = internal.connections();
          await ffprobe(`rtsp://127.0.0.1:${server.port}/cam`);
          // The shape is a real redirect for this ffprobe: alone, it dialled the internal listener.
          expect(internal.connections()).toBeGreaterThan(before);

          const reached = internal.connections();
          const relay = await startPinnedRelay({ address: '127.0.0.1', port: server.port, protocol: 'rtsp' });
          try {
            await ffprobe(`rtsp://${relay.authority}/cam`);
            expect(relay.refusal()).toMatch(/redirect|status line/);
          } finally {
            await relay.close();
          }
          expect(internal.connections()).toBe(reached);
        } finally {
          await server.close();
        }
      }
    },
    60_000,
  );
});
