/**
 * A caller's deadline (X-Request-Timeout-Ms, docs/OVERLOAD.md "Deadlines") through the gateway: a
 * malformed value, or one under the 100 ms floor, is 400; a call whose deadline passes before its work starts is refused with 503
 * `deadline_exceeded`, charged nothing, its work dropped before inference, and its Idempotency-Key
 * served normally afterwards.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { standaloneOnly } from '../helpers/composition';
import { MEDIA, settledQuota, startStack, type TestStack } from '../helpers/stack';
import { scrape, total } from '../helpers/scrape';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

const KEY = 'deadline-key-0123456789abcdef';
const IMAGE = readFileSync(path.join(MEDIA, 'images', 'street_people_car_coco9891.jpg'));
const VIDEO = readFileSync(path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv_10s.mov'));
const BOUNDARY = 'deadline-test-boundary';

/** A multipart body of one file part (and the given value fields). */
function multipart(file: { field: string; name: string; type: string; data: Buffer }, fields = {}) {
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields))
    parts.push(Buffer.from(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  parts.push(
    Buffer.from(
      `--${BOUNDARY}\r\ncontent-disposition: form-data; name="${file.field}"; filename="${file.name}"\r\n` +
        `content-type: ${file.type}\r\n\r\n`,
    ),
    file.data,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  );
  return Buffer.concat(parts);
}

/** What the tests read of an answer: the error envelope (a 201's body has none). */
interface ErrorBody {
  error: { code: string; details: Record<string, unknown> };
}

const imageBody = () => multipart({ field: 'files', name: 'a.jpg', type: 'image/jpeg', data: IMAGE });
const videoBody = () =>
  multipart(
    { field: 'file', name: 'clip.mov', type: 'video/quicktime', data: VIDEO },
    { scene_code: 'person_vehicle' },
  );

/** Sends `body` in ten pieces over about `overMs`, so that the call's turn starts before its body has arrived. */
function trickle(body: Buffer, overMs: number): ReadableStream<Uint8Array> {
  const pieces = 10;
  const size = Math.ceil(body.length / pieces);
  let i = 0;
  return new ReadableStream({
    async pull(controller) {
      if (i > 0) await new Promise((r) => setTimeout(r, overMs / pieces));
      if (i >= pieces) return controller.close();
      controller.enqueue(body.subarray(i * size, (i + 1) * size));
      i += 1;
    },
  });
}

/** The gateway reads X-Request-Timeout-Ms before it forwards a call. */
const atTheGateway = standaloneOnly('the gateway answers before it forwards anything');

describe('deadlines through the gateway', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ keys: `${KEY}:deadline` });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  const post = async (
    urlPath: string,
    idem: string,
    body: Buffer | ReadableStream<Uint8Array>,
    timeoutMs?: string,
  ) => {
    const res = await fetch(`${stack.url}${urlPath}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${KEY}`,
        'idempotency-key': idem,
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        ...(timeoutMs !== undefined ? { 'x-request-timeout-ms': timeoutMs } : {}),
      },
      body,
      duplex: 'half',
    } as RequestInit & { duplex: 'half' });
    return { status: res.status, headers: res.headers, body: (await res.json()) as ErrorBody };
  };
  const used = async () => {
    const q = await settledQuota(stack, KEY);
    return { images: q.images.used, held: q.images.held, video: q.video_tasks.used };
  };
  /** Images inference took up (their detections started). */
  const detectionsStarted = async () =>
    total(await scrape(stack), 'vision_admission_queue_wait_seconds_count', { queue: 'detections' });

  atTheGateway.it.each(['abc', '0', '1', '99', '600001', '1.5', '-5', ''])(
    'X-Request-Timeout-Ms "%s" is 400 OP-TASK-REQUEST-INVALID invalid_field on both creates',
    async (value) => {
      for (const [urlPath, body] of [
        ['/v1/vision/image-detections', imageBody()],
        ['/v1/vision/video-tasks', videoBody()],
      ] as const) {
        const r = await post(urlPath, randomUUID(), body, value);
        expect({ urlPath, status: r.status }).toEqual({ urlPath, status: 400 });
        expect(r.body.error.code).toBe('OP-TASK-REQUEST-INVALID');
        expect(r.body.error.details).toMatchObject({
          reason: 'invalid_field',
          field: 'x-request-timeout-ms',
        });
      }
      expect(await used()).toEqual({ images: 0, held: 0, video: 0 });
    },
  );

  it('an image call whose deadline passes while its body arrives is 503 deadline_exceeded, never reaches inference, and is charged nothing', async () => {
    const before = await detectionsStarted();
    const idem = randomUUID();
    const r = await post('/v1/vision/image-detections', idem, trickle(imageBody(), 1500), '500');
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe('OP-SYS-UNAVAILABLE');
    expect(r.body.error.details.reason).toBe('deadline_exceeded');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await detectionsStarted()).toBe(before);
    expect(await used()).toEqual({ images: 0, held: 0, video: 0 });
    // The key is free: the same call without a deadline is served.
    const again = await post('/v1/vision/image-detections', idem, imageBody());
    expect(again.status).toBe(201);
    expect(await detectionsStarted()).toBe(before + 1);
    expect(await used()).toEqual({ images: 1, held: 0, video: 0 });
  }, 60_000);

  it('a video task whose deadline passes while its file arrives is 503 deadline_exceeded before the charge; the key is served later', async () => {
    const idem = randomUUID();
    const r = await post('/v1/vision/video-tasks', idem, trickle(videoBody(), 1500), '500');
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe('OP-SYS-UNAVAILABLE');
    expect(r.body.error.details.reason).toBe('deadline_exceeded');
    expect(await used()).toEqual({ images: 1, held: 0, video: 0 });
    const again = await post('/v1/vision/video-tasks', idem, videoBody());
    expect(again.status).toBe(201);
    expect(await used()).toEqual({ images: 1, held: 0, video: 1 });
  }, 60_000);

  it('the floor itself, 100 ms, is a deadline: the image call is served or refused 503 deadline_exceeded, never 400', async () => {
    const r = await post('/v1/vision/image-detections', randomUUID(), imageBody(), '100');
    expect([201, 503]).toContain(r.status);
    if (r.status === 503) expect(r.body.error.details.reason).toBe('deadline_exceeded');
  }, 60_000);
});
