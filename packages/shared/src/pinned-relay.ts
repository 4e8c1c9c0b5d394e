import net from 'node:net';

/**
 * A loopback relay for one RTSP or RTMP source: ffmpeg connects to it, and it connects to the address
 * that was checked (never resolving the name again), so a name that resolves to a public address at
 * check time and to 127.0.0.1 a moment later cannot reach loopback (DNS rebinding).
 *
 * For RTSP it also reads the server's messages as they pass: a 3xx answer (a redirect, which ffmpeg
 * would follow to any address without asking) is never delivered; the connection is cut and the
 * relay remembers the refusal. Interleaved media ($-frames) and message bodies pass untouched.
 */
export interface PinnedRelay {
  /** Host and port for ffmpeg's URL: `127.0.0.1:<port>`. */
  authority: string;
  /** Set once the server tried to redirect. */
  refused(): boolean;
  close(): Promise<void>;
}

export async function startPinnedRelay(opts: {
  address: string;
  port: number;
  protocol: 'rtsp' | 'rtmp';
  connectTimeoutMs?: number;
}): Promise<PinnedRelay> {
  let refused = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    const upstream = net.connect({
      host: opts.address,
      port: opts.port,
      timeout: opts.connectTimeoutMs ?? 10_000,
    });
    sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', () => {
      sockets.delete(client);
      upstream.destroy();
    });
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    client.on('error', end);
    upstream.on('error', end);
    upstream.once('connect', () => upstream.setTimeout(0));
    upstream.on('timeout', end);
    client.pipe(upstream);
    if (opts.protocol === 'rtmp') {
      upstream.pipe(client);
      return;
    }
    const watch = new RtspReplyWatch();
    upstream.on('data', (chunk: Buffer) => {
      if (watch.push(chunk)) {
        refused = true;
        end();
        return;
      }
      if (!client.write(chunk)) {
        upstream.pause();
        client.once('drain', () => upstream.resume());
      }
    });
    upstream.on('end', () => client.end());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    authority: `127.0.0.1:${port}`,
    refused: () => refused,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const MAX_HEADER = 64 * 1024;

/**
 * Splits an RTSP server->client byte stream into messages and interleaved frames, and says when a
 * message is a 3xx response. Pure (no I/O); fed chunk by chunk.
 */
export class RtspReplyWatch {
  private pending = Buffer.alloc(0);
  /** Bytes of the current frame or body still to pass without looking. */
  private skip = 0;

  /** True when `chunk` completes a 3xx response (a redirect). */
  push(chunk: Buffer): boolean {
    let buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = Buffer.alloc(0);
    for (;;) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, buf.length);
        this.skip -= n;
        buf = buf.subarray(n);
      }
      if (buf.length === 0) return false;
      if (buf[0] === 0x24) {
        // $ <channel> <length:16>
        if (buf.length < 4) break;
        this.skip = 4 + buf.readUInt16BE(2);
        continue;
      }
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        if (buf.length > MAX_HEADER) return true; // not RTSP: refuse rather than pass blindly
        break;
      }
      const head = buf.subarray(0, end).toString('latin1');
      if (/^RTSP\/\d\.\d\s+3\d\d\b/.test(head)) return true;
      const len = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      this.skip = end + 4 + (len ? Number(len[1]) : 0);
    }
    this.pending = Buffer.from(buf);
    return false;
  }
}

/** `url` with its host and port replaced by the relay's (user information, path and query kept). */
export function throughRelay(url: string, relay: PinnedRelay): string {
  const u = new URL(url);
  u.host = relay.authority;
  return u.href;
}

/**
 * RTSP URL options ffmpeg reads from the query itself and that change the transport (`?udp`,
 * `?multicast`, `?http`, `?https` tunnelling, `?listen`): refused, as is every non-TCP transport.
 * Returns the offending option, or undefined.
 */
export function refusedRtspOption(url: URL): string | undefined {
  if (url.protocol !== 'rtsp:') return undefined;
  for (const part of url.search.replace(/^\?/, '').split('&')) {
    let name: string;
    try {
      name = decodeURIComponent(part.split('=')[0] ?? '').toLowerCase();
    } catch {
      return 'malformed option';
    }
    if (['udp', 'multicast', 'http', 'https', 'listen'].includes(name)) return name;
  }
  return undefined;
}
