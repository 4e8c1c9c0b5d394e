import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { DistributedStackOptions } from '../helpers/distributed';
import { type Sample, scrape, total } from '../helpers/scrape';
import { MEDIA, settledQuota, startStack, type TestStack } from '../helpers/stack';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { send, imageBody } = require('../../scripts/overload/open-loop') as {
  send(
    agent: undefined,
    url: string,
    key: string,
    idem: string,
    body: { body: Buffer; contentType: string },
    timeoutMs: number,
  ): Promise<{ status: number; reason?: string }>;
  imageBody(image: Buffer): { body: Buffer; contentType: string };
};

const HOLDER = 'expect-holder-0123456789';
const CALLER = 'expect-caller-0123456789';
const IMAGE = imageBody(readFileSync(path.join(MEDIA, 'images', 'street_people_car_coco9891.jpg')));

/** What came back on a raw connection after a request head: the interim `100`, or a whole final answer. */
interface HeadAnswer {
  status: number;
  headers: string;
  body: string;
}

/**
 * A raw client that sends an image call's head with `Expect: 100-continue` and sends no body byte until
 * it has read the server's answer: `100 Continue` (resolves with status 100) or a final one.
 */
class ExpectClient {
  readonly socket: net.Socket;
  private buffered = Buffer.alloc(0);
  private waiter?: () => void;

  constructor(url: string) {
    const { hostname, port } = new URL(url);
    this.socket = net.connect(Number(port), hostname);
    this.socket.on('data', (d: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, d]);
      this.waiter?.();
    });
    this.socket.on('error', () => undefined);
  }

  sendHead(key: string, idem: string): void {
    this.socket.write(
      'POST /v1/vision/image-detections HTTP/1.1\r\nHost: vision\r\n' +
        `Authorization: Bearer ${key}\r\nIdempotency-Key: ${idem}\r\n` +
        `Content-Type: ${IMAGE.contentType}\r\nContent-Length: ${IMAGE.body.length}\r\n` +
        'Expect: 100-continue\r\n\r\n',
    );
  }

  /** The next answer on the connection: `100 Continue`, or a final answer with its whole body. */
  async next(): Promise<HeadAnswer> {
    for (;;) {
      const text = this.buffered.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end >= 0) {
        const headers = text.slice(0, end);
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1]);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headers)?.[1] ?? 0);
        if (status === 100 || text.length >= end + 4 + length) {
          const size = status === 100 ? end + 4 : end + 4 + length;
          const body = this.buffered.subarray(end + 4, size).toString();
          this.buffered = this.buffered.subarray(size);
          return { status, headers, body };
        }
      }
      if (this.socket.destroyed) throw new Error(`connection closed; got ${JSON.stringify(text)}`);
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
        this.socket.once('close', resolve);
      });
    }
  }
}

/**
 * A call that needs inference is judged at the gateway on its head: a client that sends
 * `Expect: 100-continue` to a full service gets its 503 before it sends any byte of its body, and the
 * same key is served later; a client that sends the body anyway has it read and thrown away by the
 * gateway, which never forwards it, and keeps the connection.
 */
describe('Expect: 100-continue is judged at the door', () => {
  let stack: TestStack;
  const holders: ExpectClient[] = [];
  let refused: ExpectClient;
  let refusal: HeadAnswer;
  /** The Idempotency-Key of each call held or refused, in order. */
  const idems = Array.from({ length: 8 }, () => randomUUID());
  let before: Sample[];
  beforeAll(async () => {
    const options: DistributedStackOptions = {
      keys: `${HOLDER}:expect-holder,${CALLER}:expect-caller`,
      env: {
        // One call at a time per images replica and no wait for a turn: a call held open fills it.
        IMAGES_MAX_IN_FLIGHT: '1',
        IMAGES_QUEUE_MAX_WAIT_MS: '0',
        GATEWAY_CONCURRENCY: '100',
      },
      replicas: { images: 2 },
    };
    stack = await startStack(options);
    // One served call: the gateway learns the images service's capacity from its answer.
    expect((await send(undefined, stack.url, HOLDER, randomUUID(), IMAGE, 60_000)).status).toBe(201);
    // Calls admitted one after another, each holding its turn (100 Continue, then no body), until the
    // door is full and answers the next head with a final answer instead.
    for (let i = 0; i < 8; i += 1) {
      before = await scrape(stack);
      const client = new ExpectClient(stack.url);
      client.sendHead(i === 0 ? HOLDER : CALLER, idems[i]);
      const answer = await client.next();
      if (answer.status === 100) {
        holders.push(client);
        continue;
      }
      refused = client;
      refusal = answer;
      break;
    }
  }, 180_000);
  afterAll(async () => {
    for (const h of holders) h.socket.destroy();
    refused?.socket.destroy();
    await stack?.close();
  });

  it('admits a call with 100 Continue while there is room, and refuses the next on its head with 503', () => {
    expect(holders.length).toBeGreaterThan(0);
    expect(refusal.status).toBe(503);
    const body = JSON.parse(refusal.body) as { error: { code: string; details: { reason: string } } };
    expect(body.error.code).toBe('OP-SYS-UNAVAILABLE');
    expect(body.error.details.reason).toBe('overloaded');
    expect(Number(/\r\nretry-after: *(\d+)/i.exec(refusal.headers)?.[1])).toBeGreaterThanOrEqual(1);
    expect(refusal.headers).toMatch(/\r\nconnection: keep-alive/i);
  });

  it('reads and throws away a body sent anyway, at the gateway only, and keeps the connection', async () => {
    refused.socket.write(IMAGE.body);
    refused.socket.write(
      `GET /v1/vision/quota HTTP/1.1\r\nHost: vision\r\nAuthorization: Bearer ${CALLER}\r\n\r\n`,
    );
    const next = await refused.next();
    expect(next.status).toBe(200);
    // Refused by the gateway's queue, never by the images service's: nothing was forwarded.
    const after = await scrape(stack);
    const grew = (queue: string) =>
      total(after, 'vision_admission_shed_total', { queue }) -
      total(before, 'vision_admission_shed_total', { queue });
    expect(grew('gateway_image_calls')).toBe(1);
    expect(grew('image_calls')).toBe(0);
  });

  it('serves the refused call when it is sent again with the same key, once there is room', async () => {
    for (const h of holders) h.socket.destroy();
    // The held calls' turns are given back once their connections are gone.
    const free = async () =>
      total(await scrape(stack), 'vision_admission_in_flight', { queue: 'gateway_image_calls' }) === 0 &&
      total(await scrape(stack), 'vision_admission_in_flight', { queue: 'image_calls' }) === 0;
    while (!(await free())) await new Promise((r) => setTimeout(r, 50));
    const idem = idems[holders.length];
    const again = await send(undefined, stack.url, CALLER, idem, IMAGE, 60_000);
    expect(again.status).toBe(201);
    const quota = await settledQuota(stack, CALLER);
    expect({ used: quota.images.used, held: quota.images.held }).toEqual({ used: 1, held: 0 });
  });
});
