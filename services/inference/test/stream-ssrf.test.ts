/** @jest-environment ./services/inference/test/support/onnx-environment.js */
/**
 * SSRF for RTSP and RTMP sources, against a real RTSP server (gst-rtsp-server, scripts/stack/live) and
 * a real DNS protocol exchange with a name server this test controls (dns2 on loopback):
 * - an RTSP server that answers DESCRIBE with a redirect is refused (ffmpeg alone would follow it), and so is
 *   a redirect on a live reconnect, spelled as ffmpeg reads it, after real traffic passed the same relay;
 * - RTSP options that change the transport (`?udp`, `?multicast`, `?http`) are refused;
 * - ffmpeg connects to the address that was checked: a name that is re-resolved to a refused address
 *   between the check and the connection (DNS rebinding) never reaches it.
 */
import { spawn } from 'node:child_process';
import { Resolver } from 'node:dns/promises';
import net from 'node:net';
import dns2 from 'dns2';
import { cameraMedia, freePort, streamServer, type StreamServer } from '../../../test/helpers/stream-servers';
import { startTestInference } from './support/helpers';

const { Packet } = dns2;

/** A name server on loopback answering A queries for `name` with whatever `answer()` says now. */
async function startNameServer(name: string, answer: () => string) {
  const queries: string[] = [];
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [q] = request.questions;
      if (q?.name === name && q.type === Packet.TYPE.A) {
        const address = answer();
        queries.push(address);
        response.answers.push({
          name,
          type: Packet.TYPE.A,
          class: Packet.CLASS.IN,
          ttl: 0,
          address,
        } as unknown as (typeof response.answers)[number]);
      }
      void send(response);
    },
  });
  const port = await freePort();
  await server.listen({ udp: { port, address: '127.0.0.1' } });
  const resolver = new Resolver({ timeout: 2000, tries: 1 });
  resolver.setServers([`127.0.0.1:${port}`]);
  return {
    queries,
    resolve: async (host: string) => resolver.resolve4(host),
    close: () => server.close(),
  };
}

/** A TCP listener standing for an internal service: it counts who reaches it. */
async function startForbidden(host: string, port: number) {
  let connections = 0;
  const server = net.createServer((s) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((r) => server.listen(port, host, r));
  return { connections: () => connections, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('stream SSRF (RTSP, RTMP)', () => {
  let rtsp: StreamServer;
  beforeAll(async () => {
    rtsp = await streamServer('rtsp', { address: '127.0.0.2' });
    await rtsp.start();
  }, 90_000);
  afterAll(() => rtsp?.stop());

  it('refuses an RTSP redirect (which ffmpeg alone follows) and transport-changing RTSP options', async () => {
    // A server that redirects every request to the real RTSP server.
    const redirector = net.createServer((sock) => {
      sock.on('data', (d) => {
        const cseq = /CSeq:\s*(\d+)/i.exec(d.toString())?.[1] ?? '1';
        sock.write(
          `RTSP/1.0 302 Moved Temporarily\r\nCSeq: ${cseq}\r\nLocation: rtsp://127.0.0.2:${rtsp.port}/cam\r\n\r\n`,
        );
      });
      sock.on('error', () => undefined);
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    const url = `rtsp://127.0.0.1:${(redirector.address() as net.AddressInfo).port}/cam`;
    const svc = await startTestInference({
      STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
      INFERENCE_STREAM_GIVEUP_MS: '3000',
    });
    try {
      // The hazard: ffmpeg on its own follows the redirect and decodes the other server's stream.
      const followed = await new Promise<string>((resolve) => {
        const ff = spawn(
          'ffmpeg',
          ['-hide_banner', '-rtsp_transport', 'tcp', '-i', url, '-frames:v', '1', '-f', 'null', '-'],
          {
            stdio: ['ignore', 'ignore', 'pipe'],
          },
        );
        let err = '';
        ff.stderr.on('data', (d: Buffer) => (err += d.toString()));
        ff.on('close', () => resolve(err));
      });
      expect(followed).toMatch(/Redirecting to rtsp:\/\/127\.0\.0\.2/);

      await svc.parts.jobs.submit({
        job_id: 'redirect',
        scene_code: 'person_vehicle',
        source: { type: 'stream', url },
      });
      const end = await svc.collector.waitForEnd('redirect', 60_000);
      expect(end).toMatchObject({
        status: 'failed',
        frames: 0,
        reason: expect.stringMatching(/^stream_refused: /),
      });

      for (const option of ['udp', 'multicast', 'http']) {
        const r = await svc.parts.jobs.submit({
          job_id: `opt-${option}`,
          scene_code: 'person_vehicle',
          source: { type: 'stream', url: `rtsp://127.0.0.2:${rtsp.port}/cam?${option}` },
        });
        expect(r).toEqual({
          outcome: 'rejected',
          reason: expect.stringContaining(`rtsp option ${option} is not supported`),
        });
      }
    } finally {
      await svc.close();
      redirector.close();
    }
  }, 120_000);

  it('refuses a redirect on a live reconnect, in the spellings ffmpeg follows, after real traffic passed', async () => {
    const internal = await startForbidden('127.0.0.3', rtsp.port);
    // The camera's first connection reaches the real RTSP server through this front; the front then drops
    // it, and answers every later connection with an LF-only redirect to the internal listener.
    let first = true;
    let dropFirst: () => void = () => undefined;
    const front = net.createServer((sock) => {
      sock.on('error', () => undefined);
      if (first) {
        first = false;
        const upstream = net.connect(rtsp.port, '127.0.0.2');
        upstream.on('error', () => sock.destroy());
        sock.pipe(upstream).pipe(sock);
        dropFirst = () => {
          upstream.destroy();
          sock.destroy();
        };
        return;
      }
      sock.on('data', (d) => {
        const cseq = /CSeq:\s*(\d+)/i.exec(d.toString())?.[1] ?? '1';
        sock.write(`RTSP/1.0 302 Found\nCSeq: ${cseq}\nLocation: rtsp://127.0.0.3:${rtsp.port}/cam\n\n`);
      });
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    const svc = await startTestInference({
      STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
      INFERENCE_STREAM_GIVEUP_MS: '20000',
      INFERENCE_RECONNECT_MIN_MS: '200',
    });
    try {
      const url = `rtsp://127.0.0.1:${(front.address() as net.AddressInfo).port}/cam`;
      const submitted = await svc.parts.jobs.submit({
        job_id: 'reconnect',
        scene_code: 'person_vehicle',
        source: { type: 'stream', url },
        sample_fps: 5,
      });
      expect(submitted.outcome).toBe('accepted');
      const c = svc.collector;
      await c.waitFor(() => c.frames('reconnect').length >= 3, 60_000, 'frames through the relay');
      dropFirst();
      const end = await c.waitForEnd('reconnect', 60_000);
      expect(end).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^stream_refused: /) });
      expect(internal.connections()).toBe(0);
    } finally {
      await svc.close();
      await internal.close();
      await new Promise<void>((r) => front.close(() => r()));
    }
  }, 180_000);

  it('connects to the checked address: a name rebound to another address between check and connect never reaches it', async () => {
    cameraMedia();
    const name = 'camera.rebind.test';
    // The first two lookups (admission, then the check before the first connection) answer the real
    // server's address; every later one answers 0.0.0.0, which on Linux reaches this host's listeners
    // (a refused class even where private networks are allowed).
    let n = 0;
    const dns = await startNameServer(name, () => (++n <= 2 ? '127.0.0.2' : '0.0.0.0'));
    const forbidden = await startForbidden('127.0.0.1', rtsp.port);
    const svc = await startTestInference(
      {
        STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
        INFERENCE_STREAM_GIVEUP_MS: '20000',
        INFERENCE_RECONNECT_MIN_MS: '200',
      },
      { resolve: dns.resolve },
    );
    try {
      // The hazard, shown with a client that resolves when it connects: it lands on the forbidden listener.
      const rebound = await dns.resolve(name);
      expect(rebound).toEqual(['127.0.0.2']);
      n = 2;
      const late = (await dns.resolve(name))[0];
      await new Promise<void>((r) =>
        net
          .connect(rtsp.port, late)
          .on('error', () => r())
          .on('close', () => r()),
      );
      expect(forbidden.connections()).toBe(1);
      n = 0;
      dns.queries.length = 0;

      const url = `rtsp://${name}:${rtsp.port}/cam`;
      expect(
        (
          await svc.parts.jobs.submit({
            job_id: 'rebind',
            scene_code: 'person_vehicle',
            source: { type: 'stream', url },
            sample_fps: 5,
          })
        ).outcome,
      ).toBe('accepted');
      const c = svc.collector;
      await c.waitFor(() => c.frames('rebind').length >= 5, 60_000, 'frames from the checked address');
      // Nothing resolved the name again behind our back, and nothing reached the forbidden listener.
      expect(dns.queries).toEqual(['127.0.0.2', '127.0.0.2']);
      expect(forbidden.connections()).toBe(1);

      // The server restarts: the next connection is checked again, now resolves to a refused address, and is refused.
      await rtsp.stop();
      await rtsp.start();
      const end = await c.waitForEnd('rebind', 60_000);
      expect(end).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^stream_refused: /) });
      expect(forbidden.connections()).toBe(1);
    } finally {
      await svc.close();
      await forbidden.close();
      await dns.close();
    }
  }, 180_000);
});
