/**
 * A slow answer from the name server of a caller's stream host: it cannot stall admission
 * (other creates proceed meanwhile) and does not count as an inference failure that opens the shared
 * breaker. The name server is one this test controls (dns2 on loopback, STREAM_DNS_SERVERS): it holds
 * the answers for the slow names until the test ends. The stream is a real RTSP server
 * (gst-rtsp-server, scripts/stack/live).
 */
import { randomUUID } from 'node:crypto';
import dns2 from 'dns2';
import { freePort, streamServer, type StreamServer } from '../helpers/stream-servers';
import { startStack, type TestStack } from '../helpers/stack';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

const { Packet } = dns2;
const KEY = 'e2e-slowdns-0123456789abcdef';

type Answer = (typeof dns2.Packet.prototype)['answers'][number];

/**
 * `cam.test` answers 127.0.0.1 at once; `slow-*.cam.test` is held; `flaky-*.cam.test` answers its first
 * A and AAAA query at once (the tasks service's check at creation) and holds every later one (the
 * inference backend's resolution when the job is submitted).
 */
async function startNameServer() {
  const held: Array<() => void> = [];
  const seen = new Map<string, number>();
  let released = false;
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [q] = request.questions;
      const name = q?.name ?? '';
      const key = `${name}/${q?.type}`;
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      if (q?.type === Packet.TYPE.A && /(^|\.)cam\.test$/.test(name))
        response.answers.push({
          name,
          type: Packet.TYPE.A,
          class: Packet.CLASS.IN,
          ttl: 0,
          address: '127.0.0.1',
        } as unknown as Answer);
      const hold = name.startsWith('slow-') || (name.startsWith('flaky-') && n > 1);
      if (hold && !released) held.push(() => void send(response));
      else void send(response);
    },
  });
  const port = await freePort();
  await server.listen({ udp: { port, address: '127.0.0.1' } });
  return {
    server: `127.0.0.1:${port}`,
    heldCount: () => held.length,
    async close() {
      released = true;
      for (const h of held.splice(0)) h();
      await server.close();
    },
  };
}

describe('a slow name server of a caller’s stream host', () => {
  let stack: TestStack;
  let rtsp: StreamServer;
  let ns: Awaited<ReturnType<typeof startNameServer>>;

  beforeAll(async () => {
    ns = await startNameServer();
    rtsp = await streamServer('rtsp');
    await rtsp.start();
    stack = await startStack({
      keys: `${KEY}:slowdns`,
      env: {
        STREAM_DNS_SERVERS: ns.server,
        STREAM_DNS_TIMEOUT_MS: '1000',
        TASKS_PROBE_TIMEOUT_MS: '45000',
        TASKS_MAX_ACTIVE: '20',
        INFERENCE_MAX_JOBS: '20',
        QUOTA_VIDEO_DAILY: '50',
        GATEWAY_CONCURRENCY: '64',
        GATEWAY_BURST: '200',
        // A breaker that opens after two failures out of two: a single slow answer counted would show.
        TASKS_BREAKER_VOLUME: '2',
        TASKS_BREAKER_ERROR_PERCENT: '50',
      },
    });
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
    await rtsp?.stop();
    await ns?.close();
  });

  const create = (host: string) =>
    stack.api('POST', '/v1/vision/tasks', {
      key: KEY,
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ scene_code: 'person_vehicle', stream_url: `rtsp://${host}:${rtsp.port}/cam` }),
    });
  const used = async (): Promise<number> =>
    (await stack.api('GET', '/v1/vision/quota', { key: KEY })).body.video_tasks.used as number;
  const stop = (id: string) => stack.api('POST', `/v1/vision/tasks/${id}/stop`, { key: KEY });

  it('warms the RTSP server up (its first client starts the encoder)', async () => {
    const r = await create('cam.test');
    expect({ status: r.status, body: r.body }).toMatchObject({ status: 201, body: { status: 'running' } });
    await stop(r.body.task_id as string);
  }, 120_000);

  it('does not stall other creates: they run while eight slow answers are held; the slow ones are 400 stream_unreachable, uncharged', async () => {
    const before = await used();
    const slow = Array.from({ length: 8 }, (_, i) => create(`slow-${i}.cam.test`));
    // One after the other: the RTSP test server mishandles two clients starting at the same instant.
    const fast = [await create('cam.test'), await create('cam.test')];
    // The name server holds the slow answers (A and AAAA) until the test ends: nothing waited for them.
    expect(ns.heldCount()).toBeGreaterThanOrEqual(8);
    for (const r of fast) {
      expect({ status: r.status, body: r.body }).toMatchObject({ status: 201, body: { status: 'running' } });
    }
    for (const r of await Promise.all(slow)) {
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({
        code: 'OP-TASK-REQUEST-INVALID',
        details: { reason: 'stream_unreachable' },
      });
      expect(r.body.error.message).toMatch(/did not resolve in time/);
    }
    expect(await used()).toBe(before + 2);
    for (const r of fast) await stop(r.body.task_id as string);
  }, 120_000);

  it('a slow answer at the inference backend refunds the task and leaves the shared breaker closed', async () => {
    const before = await used();
    for (let i = 0; i < 4; i++) {
      const r = await create(`flaky-${i}.cam.test`);
      // Admitted by the tasks service (its answer was quick), refused by the backend: refunded.
      expect({ status: r.status, body: r.body }).toMatchObject({ status: 201, body: { status: 'refunded' } });
      expect(r.body.reason).toMatch(/^backend_rejected/);
    }
    expect(await used()).toBe(before);
    // Four such answers with a breaker that opens after two failures: still closed, tasks are accepted.
    const ok = await create('cam.test');
    expect({ status: ok.status, body: ok.body }).toMatchObject({ status: 201, body: { status: 'running' } });
    await stop(ok.body.task_id as string);
  }, 180_000);
});
