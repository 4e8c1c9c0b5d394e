import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { LINGER_MS, SERVER_LIMITS } from '@vision/shared';
import { standaloneOnly } from '../helpers/composition';
import { head, imageForm, rawClient, serving, sleep, transportStack } from './support';

const KEY = 'transport-shapes-0123456789';
const AUTH = `Authorization: Bearer ${KEY}`;
const SCENES = `GET /api/op/v1/scenes HTTP/1.1\r\nHost: t\r\n${AUTH}\r\n\r\n`;
/** The gateway's own server answers or closes these connections (Node's parser, its limits, its authentication). */
const atTheGateway = standaloneOnly(
  'the gateway answers or closes the connection before it forwards anything',
);

/** Sends `bytes` on a new connection; resolves with the first answer. */
async function exchange(base: string, bytes: string) {
  const c = await rawClient(base);
  await c.write(Buffer.from(bytes, 'latin1'));
  const a = await c.answer(15_000);
  c.socket.destroy();
  return a;
}

/** Only a backstop under the case's own timeout: the cases wait for closes by the order they happen in. */
const CLOSE_BOUND_MS = 100_000;

const reason = (body: string): unknown =>
  (JSON.parse(body) as { error: { details?: { reason?: unknown } } }).error.details?.reason;

/**
 * Malformed framing, interim answers, pipelining, slow heads and idle connections: each gets the right
 * answer, none gets a 5xx, and afterwards the service serves and charged nothing.
 */
describe('transport: malformed and slow clients', () => {
  const stack = transportStack(KEY, 'transport-shapes');

  const post = (extra: string, body = '') =>
    `POST /v1/vision/image-detections HTTP/1.1\r\nHost: t\r\n${AUTH}\r\nIdempotency-Key: ${randomUUID()}\r\nContent-Type: multipart/form-data; boundary=x\r\n${extra}\r\n${body}`;

  atTheGateway.it.each([
    [
      'Content-Length with Transfer-Encoding',
      post('Content-Length: 5\r\nTransfer-Encoding: chunked\r\n', '0\r\n\r\n'),
    ],
    ['two different Content-Lengths', post('Content-Length: 5\r\nContent-Length: 6\r\n', 'hello!')],
    ['an obs-folded header', post('Content-Length: 0\r\nX-Folded: a\r\n  b\r\n')],
    ['an invalid chunk size', post('Transfer-Encoding: chunked\r\n', 'zz\r\nhello\r\n0\r\n\r\n')],
    [
      'a header block past the limit',
      `GET /v1/vision/quota HTTP/1.1\r\nHost: t\r\n${AUTH}\r\nX-Fill: ${'a'.repeat(20_000)}\r\n\r\n`,
    ],
  ])('%s gets 400 with the error envelope', async (_name, bytes) => {
    const a = await exchange(stack().url, bytes);
    expect(a.status).toBe(400);
    expect(JSON.parse(a.body).error.code).toBe('OP-TASK-REQUEST-INVALID');
  });

  it('Expect: 100-continue gets 100 Continue, then the final answer', async () => {
    const { contentType, body } = imageForm(2048, 'no_such_scene');
    const c = await rawClient(stack().url);
    await c.write(
      head('/v1/vision/image-detections', {
        authorization: `Bearer ${KEY}`,
        'idempotency-key': randomUUID(),
        'content-type': contentType,
        'content-length': body.length,
        expect: '100-continue',
      }),
    );
    await sleep(200);
    await c.write(body);
    const a = await c.answer();
    expect(a.headers['x-interim']).toBe('100');
    expect(a.status).toBe(400);
    c.socket.destroy();
  });

  it('pipelined requests are answered in order on one connection', async () => {
    const c = await rawClient(stack().url);
    await c.write(
      SCENES + `GET /v1/vision/tasks/${randomUUID()} HTTP/1.1\r\nHost: t\r\n${AUTH}\r\n\r\n` + SCENES,
    );
    expect(await c.statuses(3)).toEqual([200, 404, 200]);
    c.socket.destroy();
  });

  atTheGateway.it(
    'a head sent one byte a second (slowloris) is cut with 408 at the head deadline, while others are served',
    async () => {
      const c = await rawClient(stack().url);
      await c.write(`GET /api/op/v1/scenes HTTP/1.1\r\nHost: t\r\nX-Slow: `);
      const drip = setInterval(() => void c.write('a'), 1000);
      try {
        const started = Date.now();
        // Well-behaved calls meanwhile.
        for (let k = 0; k < 5; k++) {
          expect(await serving(stack(), KEY)).toBe(true);
          await sleep(500);
        }
        const a = await c.answer(SERVER_LIMITS.headersTimeoutMs + 10_000);
        expect(a.status).toBe(408);
        expect(Date.now() - started).toBeGreaterThanOrEqual(SERVER_LIMITS.headersTimeoutMs - 1000);
      } finally {
        clearInterval(drip);
        c.socket.destroy();
      }
    },
    60_000,
  );

  atTheGateway.it(
    'a thousand idle connections neither stop others being served nor stay open past the deadlines',
    async () => {
      const url = new URL(stack().url);
      const idle = await Promise.all(
        Array.from(
          { length: 1000 },
          () =>
            new Promise<net.Socket>((resolve, reject) => {
              const s = net.connect(Number(url.port), url.hostname, () => resolve(s));
              s.on('error', reject);
            }),
        ),
      );
      const closed = idle.map((s) => new Promise<void>((r) => s.once('close', () => r())));
      idle.forEach((s) => s.on('error', () => undefined));
      expect(await serving(stack(), KEY)).toBe(true);
      // No byte of a head within the head deadline: every idle connection is closed by the server.
      await Promise.race([Promise.all(closed), sleep(SERVER_LIMITS.headersTimeoutMs + 10_000)]);
      expect(idle.filter((s) => !s.destroyed).length).toBe(0);
      expect(await serving(stack(), KEY)).toBe(true);
    },
    60_000,
  );

  atTheGateway.it(
    'a thousand keep-alive connections left idle after one answer each are closed by the keep-alive deadline, while others are served',
    async () => {
      const clients = await Promise.all(Array.from({ length: 1000 }, () => rawClient(stack().url)));
      await Promise.all(clients.map((c) => c.write('GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n')));
      const answers = await Promise.all(clients.map((c) => c.answer()));
      // Kept alive: each answer is 200 and leaves its connection open (no `Connection: close`, no FIN with it).
      expect(
        answers.filter((a) => a.status === 200 && a.ended === 'open' && a.headers.connection !== 'close'),
      ).toHaveLength(1000);
      // A connection opened after those answers that never sends a byte: the head deadline (20 s) closes it, so
      // it outlives the thousand only if they were closed by the keep-alive deadline (5 s), which started earlier.
      const silent = await rawClient(stack().url);
      const closedAll = Promise.all(clients.map((c) => c.closed(CLOSE_BOUND_MS)));
      const first = Promise.race([
        closedAll.then(() => 'the thousand'),
        silent.closed(CLOSE_BOUND_MS).then(() => 'the silent one'),
      ]);
      expect(await serving(stack(), KEY)).toBe(true);
      expect(await first).toBe('the thousand');
      // Each ended by the server with a FIN, none reset.
      expect((await closedAll).filter((ended) => ended !== 'end')).toEqual([]);
      silent.socket.destroy();
      expect(await serving(stack(), KEY)).toBe(true);
    },
    120_000,
  );

  atTheGateway.it(
    'an unauthenticated upload under 1 MiB is answered 401; its body is discarded and the connection stays usable',
    async () => {
      const { contentType, body } = imageForm(600_000, 'person_vehicle');
      const c = await rawClient(stack().url);
      await c.write(
        head('/v1/vision/image-detections', { 'content-type': contentType, 'content-length': body.length }),
      );
      await c.write(body.subarray(0, 300_000));
      await sleep(100);
      await c.write(body.subarray(300_000));
      await c.write(SCENES);
      expect(await c.statuses(2)).toEqual([401, 200]);
      c.socket.destroy();
    },
  );

  atTheGateway.it(
    'an unauthenticated upload past 1 MiB gets its 401 at once, and the connection is closed after a linger',
    async () => {
      const { contentType, body } = imageForm(6_000_000, 'person_vehicle');
      const c = await rawClient(stack().url);
      await c.write(
        head('/v1/vision/image-detections', { 'content-type': contentType, 'content-length': body.length }),
      );
      await c.write(body.subarray(0, 1_500_000));
      const a = await c.answer();
      expect(a.status).toBe(401);
      expect(reason(a.body)).toBeUndefined();
      // The linger: the answer has ended, and what the client still sends is read and thrown away, so the close
      // that follows is clean. A connection closed at once would meet these bytes with a reset.
      await c.write(body.subarray(1_500_000, 1_600_000));
      expect(await c.closed(LINGER_MS + 20_000)).toBe('end');
    },
  );
});
