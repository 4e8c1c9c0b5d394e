import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { startEgressProxy, type EgressProxy } from '../src/egress/egress-proxy';
import type { HostResolver } from '../src/egress/host-check';

/** A plain origin on loopback that records the requests it gets. */
async function origin(): Promise<{
  port: number;
  hits: { url?: string; host?: string }[];
  /** TCP connections the origin accepted, requests or not. */
  connections(): number;
  close(): Promise<void>;
}> {
  const hits: { url?: string; host?: string }[] = [];
  const server = http.createServer((req, res) => {
    hits.push({ url: req.url, host: req.headers.host });
    res.end('origin says hi');
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    hits,
    connections: () => connections,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A GET through the proxy in absolute form, as ffmpeg sends it. */
function viaProxy(
  proxy: EgressProxy,
  url: string,
  method = 'GET',
): Promise<{ status: number; body: string }> {
  const p = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: p.hostname,
        port: p.port,
        method,
        path: url,
        headers: { host: URL.canParse(url) ? new URL(url).host : 'x' },
        agent: false,
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Opens a CONNECT tunnel; resolves with the proxy's status line and, when 200, a request sent through it. */
function tunnel(proxy: EgressProxy, authority: string): Promise<{ statusLine: string; reply: string }> {
  const p = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(p.port), p.hostname, () => {
      s.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n\r\n`);
    });
    let buf = '';
    let sent = false;
    let statusLine = '';
    s.on('data', (c: Buffer) => {
      buf += c.toString();
      if (!sent && buf.includes('\r\n\r\n')) {
        statusLine = buf.split('\r\n')[0];
        if (!statusLine.includes(' 200 ')) {
          s.destroy();
          return resolve({ statusLine, reply: '' });
        }
        sent = true;
        buf = '';
        s.write(`GET /through HTTP/1.1\r\nhost: ${authority}\r\nconnection: close\r\n\r\n`);
      }
    });
    // A close before any status line resolves with an empty one: the caller's assert says what was missing.
    s.on('end', () => resolve({ statusLine, reply: sent ? buf : '' }));
    s.on('error', reject);
  });
}

describe('egress proxy', () => {
  let o: Awaited<ReturnType<typeof origin>>;
  beforeEach(async () => {
    o = await origin();
  });
  afterEach(async () => {
    await o.close();
  });

  it('refuses private destinations by default, before connecting (HTTP and CONNECT)', async () => {
    const proxy = await startEgressProxy({ allowPrivate: false });
    try {
      const r = await viaProxy(proxy, `http://127.0.0.1:${o.port}/secret`);
      expect(r.status).toBe(403);
      expect(r.body).toMatch(/loopback/);
      const t = await tunnel(proxy, `127.0.0.1:${o.port}`);
      expect(t).toEqual({ statusLine: 'HTTP/1.1 403 Forbidden', reply: '' });
      // Refused before connecting: the origin never saw a TCP connection, let alone a request.
      expect(o.hits).toHaveLength(0);
      expect(o.connections()).toBe(0);
    } finally {
      await proxy.close();
    }
  });

  it('connects to the address it checked, keeping the Host the client asked for', async () => {
    const names: Record<string, string[]> = { 'stream.example': ['127.0.0.1'] };
    const resolve: HostResolver = (host) => Promise.resolve(names[host] ?? []);
    const proxy = await startEgressProxy({ allowPrivate: true, resolve });
    try {
      const r = await viaProxy(proxy, `http://stream.example:${o.port}/live.m3u8?x=1`);
      expect(r).toEqual({ status: 200, body: 'origin says hi' });
      expect(o.hits).toEqual([{ url: '/live.m3u8?x=1', host: `stream.example:${o.port}` }]);
      const t = await tunnel(proxy, `stream.example:${o.port}`);
      expect(t.statusLine).toMatch(/ 200 /);
      expect(t.reply).toMatch(/origin says hi/);
      expect(o.hits[1]).toEqual({ url: '/through', host: `stream.example:${o.port}` });
    } finally {
      await proxy.close();
    }
  });

  it('refuses a name when any of its addresses is refused (cloud metadata even with private networks open)', async () => {
    const resolve: HostResolver = () => Promise.resolve(['127.0.0.1', '169.254.169.254']);
    const proxy = await startEgressProxy({ allowPrivate: true, resolve });
    try {
      expect((await viaProxy(proxy, `http://rebind.example:${o.port}/`)).status).toBe(403);
      expect((await tunnel(proxy, `rebind.example:${o.port}`)).statusLine).toMatch(/ 403 /);
      expect(o.hits).toHaveLength(0);
    } finally {
      await proxy.close();
    }
  });

  it('answers 502 for a name that does not resolve, 405 for other methods, 400 for a non-absolute URL', async () => {
    const proxy = await startEgressProxy({
      allowPrivate: true,
      resolve: () => Promise.reject(new Error('nx')),
    });
    try {
      expect((await viaProxy(proxy, 'http://nowhere.example/')).status).toBe(502);
      expect((await viaProxy(proxy, `http://127.0.0.1:${o.port}/`, 'POST')).status).toBe(405);
      expect((await viaProxy(proxy, '/relative')).status).toBe(400);
      expect((await tunnel(proxy, 'no-port')).statusLine).toMatch(/ 400 /);
      expect(o.hits).toHaveLength(0);
    } finally {
      await proxy.close();
    }
  });

  it('cuts the client the moment its origin dies mid-answer (HTTP and CONNECT), so ffmpeg reconnects at once', async () => {
    // An origin that sends headers and part of an endless body, then is killed (its sockets destroyed).
    const sockets = new Set<net.Socket>();
    const dying = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'video/mp2t' });
      res.write(Buffer.alloc(1000));
    });
    dying.on('connection', (s) => sockets.add(s));
    await new Promise<void>((r) => dying.listen(0, '127.0.0.1', () => r()));
    const port = (dying.address() as AddressInfo).port;
    const proxy = await startEgressProxy({ allowPrivate: true });
    const p = new URL(proxy.url);
    try {
      // Plain HTTP: the client's response ends in an error (not a clean end, not a hang).
      const http1 = new Promise<string>((resolve) => {
        const req = http.request(
          { host: p.hostname, port: p.port, path: `http://127.0.0.1:${port}/live.ts`, agent: false },
          (res) => {
            res.once('data', () => [...sockets].forEach((s) => s.destroy()));
            res.on('error', () => resolve('cut'));
            res.on('end', () => resolve('ended cleanly'));
          },
        );
        req.on('error', () => resolve('cut'));
        req.end();
      });
      expect(await http1).toBe('cut');
      // CONNECT: the tunnel closes when the origin's connection dies.
      const closed = new Promise<boolean>((resolve) => {
        const s = net.connect(Number(p.port), p.hostname, () =>
          s.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n\r\n`),
        );
        let buf = '';
        s.on('data', (c: Buffer) => {
          buf += c.toString('latin1');
          if (buf.includes('Connection Established') && !buf.includes('GET sent')) {
            buf += 'GET sent';
            s.write(`GET /live.ts HTTP/1.1\r\nhost: x\r\n\r\n`);
          } else if (buf.includes('video/mp2t')) [...sockets].forEach((x) => x.destroy());
        });
        s.on('close', () => resolve(true));
        s.on('error', () => undefined);
      });
      expect(await closed).toBe(true);
    } finally {
      await proxy.close();
      await new Promise<void>((r) => dying.close(() => r()));
    }
  });
});
