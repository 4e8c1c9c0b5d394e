import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { checkHostAddresses, type HostResolver } from './host-check';
import type { Logger } from '../telemetry/logger';

export interface EgressProxyOptions {
  /** Open private, loopback and link-local ranges (development and tests); cloud metadata stays refused. */
  allowPrivate: boolean;
  resolve?: HostResolver;
  logger?: Logger;
  /** Connection set-up limit towards a destination. */
  connectTimeoutMs?: number;
}

export interface EgressProxy {
  /** `http://127.0.0.1:<port>`: pass it to ffmpeg/ffprobe as `-http_proxy`. */
  url: string;
  close(): Promise<void>;
}

/**
 * ffmpeg/ffprobe input options: the protocol whitelist for `scheme` and, for http(s) with an egress
 * proxy, `-http_proxy` (HTTPS then travels as a CONNECT tunnel: ffmpeg's `httpproxy` protocol).
 */
export function ffmpegInputGuard(scheme: string, whitelist: string, httpProxy: string | undefined): string[] {
  if (httpProxy === undefined || (scheme !== 'http' && scheme !== 'https'))
    return ['-protocol_whitelist', whitelist];
  const tunnel = scheme === 'https' ? ',httpproxy' : '';
  return ['-protocol_whitelist', `${whitelist}${tunnel}`, '-http_proxy', httpProxy];
}

type Destination = { ok: true; address: string } | { ok: false; status: number; reason: string };

/**
 * The address check at connect time for everything ffmpeg or ffprobe fetch over HTTP(S) from a
 * caller-given stream URL: the playlist, every HLS segment or key it lists (on any host), and every
 * retry. Each connection's host is resolved here, every address is checked against the shared policy
 * (address-policy.ts), and the connection goes to the address that was checked, so DNS rebinding
 * between a check and the connection is impossible. Plain HTTP arrives as absolute-form GET/HEAD
 * requests, HTTPS as CONNECT tunnels (TLS stays end to end between ffmpeg and the origin).
 *
 * Listens on loopback only. Logs name the host, never the path or credentials; no span is made for a
 * proxied request (telemetry.ts ignores absolute-form targets) nor for the request sent on.
 */
export async function startEgressProxy(opts: EgressProxyOptions): Promise<EgressProxy> {
  const connectTimeoutMs = opts.connectTimeoutMs ?? 10_000;

  async function destination(hostname: string): Promise<Destination> {
    const check = await checkHostAddresses(hostname, opts);
    if (check.ok) return { ok: true, address: check.addresses[0] };
    if (check.unresolvable) return { ok: false, status: 502, reason: 'host does not resolve' };
    const { cls } = check.refused;
    opts.logger?.warn(
      { host: hostname.replace(/^\[(.*)\]$/, '$1'), class: cls },
      'stream egress refused: address not allowed',
    );
    return { ok: false, status: 403, reason: `host resolves to a ${cls} address (refused)` };
  }

  const server = http.createServer((req, res) => {
    const refuse = (status: number, reason: string) => {
      if (res.headersSent) return res.destroy();
      res.writeHead(status, { 'content-type': 'text/plain', connection: 'close' });
      res.end(`${reason}\n`);
    };
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      return refuse(400, 'absolute http:// URL expected');
    }
    if (target.protocol !== 'http:') return refuse(400, 'absolute http:// URL expected');
    if (req.method !== 'GET' && req.method !== 'HEAD') return refuse(405, 'only GET and HEAD');
    void destination(target.hostname).then((d) => {
      if (!d.ok) return refuse(d.status, d.reason);
      const headers = { ...req.headers };
      delete headers['proxy-connection'];
      delete headers['proxy-authorization'];
      // Tracing suppressed: no client span records the caller's URL, no trace header reaches the host.
      const upstream = context.with(suppressTracing(ROOT_CONTEXT), () =>
        http.request(
          {
            host: d.address,
            port: target.port || 80,
            method: req.method,
            path: `${target.pathname}${target.search}`,
            headers: { ...headers, host: target.host },
            setHost: false,
            agent: false,
            timeout: connectTimeoutMs,
          },
          (up) => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
            // The origin went away mid-answer (restarted, killed): cut ffmpeg's connection too, at once,
            // rather than leave it waiting for bytes that never come until its read timeout.
            up.on('error', () => res.destroy());
            up.on('close', () => {
              if (!up.complete) res.destroy();
            });
          },
        ),
      );
      upstream.on('timeout', () => upstream.destroy(new Error('timeout')));
      upstream.on('error', () => refuse(502, 'upstream unreachable'));
      res.on('close', () => upstream.destroy());
      upstream.end();
    });
  });

  const tunnels = new Set<Duplex>();
  server.on('connect', (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    tunnels.add(client);
    client.on('close', () => tunnels.delete(client));
    const fail = (status: number, reason: string) => {
      client.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
    };
    client.on('error', () => client.destroy());
    const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(req.url ?? '');
    const port = m ? Number(m[2]) : 0;
    if (!m || port < 1 || port > 65535) return fail(400, 'Bad Request');
    void destination(m[1]).then((d) => {
      if (!d.ok) return fail(d.status, d.status === 403 ? 'Forbidden' : 'Bad Gateway');
      const upstream = net.connect({ host: d.address, port, timeout: connectTimeoutMs });
      let established = false;
      upstream.once('connect', () => {
        established = true;
        upstream.setTimeout(0);
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('timeout', () => upstream.destroy(new Error('timeout')));
      upstream.on('error', () => {
        if (!established) fail(502, 'Bad Gateway');
        else client.destroy();
      });
      upstream.on('close', () => {
        if (established) client.destroy();
      });
      client.on('close', () => upstream.destroy());
    });
  });
  server.on('clientError', (_err, socket) => socket.destroy());

  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(0, '127.0.0.1', () => res());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((res) => {
        for (const t of tunnels) t.destroy();
        server.closeAllConnections();
        server.close(() => res());
      }),
  };
}
