import net from 'node:net';
import { RtspReplyWatch } from './rtsp-reply-watch';

/**
 * A loopback relay for one RTSP or RTMP source: ffmpeg connects to it, and it connects to the address
 * that was checked (never resolving the name again), so a name that resolves to a public address at
 * check time and to 127.0.0.1 a moment later cannot reach loopback (DNS rebinding).
 *
 * For RTSP it also reads the server's messages as they pass, as ffmpeg reads them (RtspReplyWatch): a 3xx
 * answer (a redirect, which ffmpeg would follow to any address without asking), or a message ffmpeg could
 * read differently from the canonical reading, is never delivered; the connection is cut and the relay
 * remembers the refusal. Interleaved media ($-frames) and message bodies pass untouched.
 */
export interface PinnedRelay {
  /** Host and port for ffmpeg's URL: `127.0.0.1:<port>`. */
  authority: string;
  /** Set once the server tried to redirect, or sent a message ffmpeg could read differently. */
  refused(): boolean;
  /** What was refused, in words that name no address: for logs and task reasons. */
  refusal(): string | undefined;
  close(): Promise<void>;
}

export async function startPinnedRelay(opts: {
  address: string;
  port: number;
  protocol: 'rtsp' | 'rtmp';
  connectTimeoutMs?: number;
}): Promise<PinnedRelay> {
  let refusal: string | undefined;
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
        refusal ??= watch.refusal;
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
    refused: () => refusal !== undefined,
    refusal: () => refusal,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
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
