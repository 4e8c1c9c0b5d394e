/**
 * The resolver of callers' stream hosts (host-check.ts streamResolver) against a name server this test
 * controls (dns2 on loopback) that holds the answers for some names until the test ends: a held
 * answer ends in DnsTimeoutError at the deadline, other names resolve meanwhile, and work of libuv's
 * thread pool (here pbkdf2) is not held up by the waiting lookups (dns.lookup would hold one pool
 * thread per lookup).
 */
import { pbkdf2 } from 'node:crypto';
import net from 'node:net';
import dns2 from 'dns2';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { DnsTimeoutError, checkHostAddresses, streamResolver } from '../src/egress/host-check';
import { startTelemetry } from '../src/telemetry/telemetry';

const { Packet } = dns2;
type Answer = (typeof dns2.Packet.prototype)['answers'][number];

async function startNameServer() {
  const held: Array<() => void> = [];
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [q] = request.questions;
      const name = q?.name ?? '';
      if (name.startsWith('held-')) return void held.push(() => void send(response));
      if (name === 'cam.test' && q?.type === Packet.TYPE.A)
        response.answers.push({
          name,
          type: Packet.TYPE.A,
          class: Packet.CLASS.IN,
          ttl: 0,
          address: '127.0.0.1',
        } as unknown as Answer);
      // Anything else: an empty answer at once.
      void send(response);
    },
  });
  const port = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  await server.listen({ udp: { port, address: '127.0.0.1' } });
  return {
    server: `127.0.0.1:${port}`,
    held: () => held.length,
    async close() {
      for (const h of held.splice(0)) h();
      await server.close();
    },
  };
}

const pbkdf2Once = () =>
  new Promise<void>((resolve, reject) =>
    pbkdf2('secret', 'salt', 20_000, 32, 'sha256', (err) => (err ? reject(err) : resolve())),
  );

describe('streamResolver', () => {
  let ns: Awaited<ReturnType<typeof startNameServer>>;
  beforeAll(async () => {
    ns = await startNameServer();
  });
  afterAll(() => ns.close());

  it('gives up on held answers at the deadline while other names and the thread pool go on', async () => {
    const resolve = streamResolver({ servers: [ns.server], timeoutMs: 3000 });
    let heldSettled = 0;
    const held = Array.from({ length: 8 }, (_, i) =>
      resolve(`held-${i}.test`)
        .then(
          () => 'resolved',
          (err: unknown) => err,
        )
        .finally(() => heldSettled++),
    );
    // More waiting lookups than libuv has pool threads (4), then pool work and another name.
    await Promise.all(Array.from({ length: 8 }, pbkdf2Once));
    expect(await resolve('cam.test')).toEqual(['127.0.0.1']);
    expect(heldSettled).toBe(0);
    expect(ns.held()).toBeGreaterThanOrEqual(8);
    for (const r of await Promise.all(held)) expect(r).toBeInstanceOf(DnsTimeoutError);
  });

  it('a timed-out host is reported as such by checkHostAddresses; an empty answer is final with servers given', async () => {
    const resolve = streamResolver({ servers: [ns.server], timeoutMs: 500 });
    expect(await checkHostAddresses('held-x.test', { allowPrivate: true, resolve })).toEqual({
      ok: false,
      unresolvable: true,
      timedOut: true,
    });
    expect(await checkHostAddresses('nothing.test', { allowPrivate: true, resolve })).toEqual({
      ok: false,
      unresolvable: true,
    });
    expect(await checkHostAddresses('cam.test', { allowPrivate: true, resolve })).toEqual({
      ok: true,
      addresses: ['127.0.0.1'],
    });
  });

  it("a timed-out lookup is recorded on the span active when it was asked (the create's span)", async () => {
    const exporter = new InMemorySpanExporter();
    const telemetry = startTelemetry('dns-test', {}, [new SimpleSpanProcessor({ exporter })]);
    try {
      const resolve = streamResolver({ servers: [ns.server], timeoutMs: 300 });
      await trace.getTracer('test').startActiveSpan('POST /v1/vision/tasks', async (span) => {
        await expect(resolve('held-span.test')).rejects.toBeInstanceOf(DnsTimeoutError);
        expect(await resolve('cam.test')).toEqual(['127.0.0.1']);
        span.end();
      });
      const [span] = exporter.getFinishedSpans().filter((s) => s.name === 'POST /v1/vision/tasks');
      expect(span?.attributes).toMatchObject({ 'error.type': 'timeout', timeout_ms: 300 });
      expect(span?.events.find((e) => e.name === 'timeout')?.attributes).toMatchObject({
        'peer.service': 'stream_dns',
      });
    } finally {
      await telemetry.shutdown();
    }
  });
});
