/** @jest-environment ./services/inference/test/support/onnx-environment.js */
/**
 * Inference refusing an image for want of room or time (503 `overloaded` or `deadline_exceeded` from
 * its detect queue) refuses the whole image call: 503 OP-SYS-UNAVAILABLE with the same reason and a
 * Retry-After, nothing charged or kept, and the Idempotency-Key free for a retry (docs/OVERLOAD.md).
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { metrics } from '@vision/shared';
import {
  IDENTITY_HEADER,
  identityHeader,
  imagesQuotaOf,
  media,
  sha256,
  startStack,
  type Stack,
} from './harness';
import { keepClearOfQuotaDayTurn } from '../../../test/helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

jest.setTimeout(120_000);

const PATH = '/v1/vision/image-detections';
const JPG = 'sheep_coco5992.jpg';
const PNG = 'boat_sailboat_kodim06.png';

const post = (stack: Stack, subject: string, key: string) =>
  request(stack.images.url)
    .post(PATH)
    .set(IDENTITY_HEADER, identityHeader(subject))
    .set('Idempotency-Key', key)
    .field('scene_code', 'cow_sheep');

const quotaOf = imagesQuotaOf;

function expectShed(r: request.Response, retryAfter?: string) {
  expect(r.status).toBe(503);
  expect(r.body.error.code).toBe('OP-SYS-UNAVAILABLE');
  expect(r.body.error.details.reason).toBe('overloaded');
  expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  if (retryAfter) expect(r.headers['retry-after']).toBe(retryAfter);
}

describe('inference with its detect queue shrunk to one slot and no wait', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      inferenceEnv: { INFERENCE_DETECT_MAX_IN_FLIGHT: '1', INFERENCE_DETECT_MAX_WAIT_MS: '0' },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** Calls inference's detect queue runs now (this process's gauge: the stack runs in it). */
  const detectionsRunning = async () => {
    const { values } = await metrics.admissionInFlight.family.get();
    return values.filter((v) => v.labels.queue === 'detections').reduce((n, v) => n + v.value, 0);
  };

  /** A detect request that holds inference's one slot until `release` sends the rest of its image. */
  async function holdTheSlot(): Promise<{ release(): Promise<number> }> {
    const image = media(JPG);
    const req = http.request(`${stack.inferenceUrl}/internal/v1/detect?scene_code=cow_sheep`, {
      method: 'POST',
      headers: {
        [IDENTITY_HEADER]: identityHeader('slot-holder', 'inference', {
          method: 'POST',
          target: '/internal/v1/detect?scene_code=cow_sheep',
        }),
        'content-type': 'image/jpeg',
        'content-length': String(image.length),
      },
    });
    const answered = new Promise<number>((resolve, reject) => {
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
    });
    req.write(image.subarray(0, 1000));
    // Its turn is taken as its headers arrive, before its body is read: wait until it runs.
    while ((await detectionsRunning()) < 1) await new Promise((r) => setTimeout(r, 20));
    return {
      release: async () => {
        req.end(image.subarray(1000));
        return answered;
      },
    };
  }

  it('a call inference has no room for is 503 overloaded, charged nothing; the same key is served later', async () => {
    const subject = 'crowded';
    // One call measures inference's service time (an empty queue admits whatever its estimate).
    expect((await post(stack, subject, randomUUID()).attach('files', media(JPG), 'a.jpg')).status).toBe(201);
    const before = await quotaOf(stack, subject);
    expect(before).toMatchObject({ used: 1, held: 0 });

    const key = randomUUID();
    const slot = await holdTheSlot();
    let refused: request.Response;
    try {
      refused = await post(stack, subject, key).attach('files', media(JPG), 'a.jpg');
    } finally {
      expect(await slot.release()).toBe(200);
    }
    expectShed(refused);
    expect(await quotaOf(stack, subject)).toMatchObject({ used: 1, held: 0 });

    const retried = await post(stack, subject, key).attach('files', media(JPG), 'a.jpg');
    expect(retried.status).toBe(201);
    expect(retried.body.request_id).toBe(key);
    expect(retried.body.results[0].status).toBe('succeeded');
    expect(await quotaOf(stack, subject)).toMatchObject({ used: 2, held: 0 });
  });
});

describe('an image shed after another of the call succeeded', () => {
  let stack: Stack;
  beforeAll(async () => {
    // One image at a time, so that the first one is detected and relayed before the second is shed.
    stack = await startStack({ inference: 'fake', env: { IMAGES_DETECT_CONCURRENCY: '1' } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('refuses the whole call: nothing charged, nothing kept, no task record; the same key is served later', async () => {
    const subject = 'half-done';
    const key = randomUUID();
    stack.fake!.shedding.add(sha256(media(PNG)));
    let r: request.Response;
    try {
      r = await post(stack, subject, key)
        .attach('files', media(JPG), 'a.jpg')
        .attach('files', media(PNG), 'b.png');
    } finally {
      stack.fake!.shedding.clear();
    }
    // Inference's own Retry-After is passed on.
    expectShed(r, '7');
    expect(stack.fake!.detectCalls).toBe(2);
    expect(await quotaOf(stack, subject)).toMatchObject({ used: 0, held: 0 });
    const stored = await stack.store.listOlderThan('images/', new Date(Date.now() + 86_400_000), 100);
    expect(stored).toEqual([]);
    await stack.recorded();
    expect([...stack.tasks.records.values()].filter((t) => t.subject === subject)).toEqual([]);

    const retried = await post(stack, subject, key)
      .attach('files', media(JPG), 'a.jpg')
      .attach('files', media(PNG), 'b.png');
    expect(retried.status).toBe(201);
    expect(retried.body.results.map((x: { status: string }) => x.status)).toEqual(['succeeded', 'succeeded']);
    expect(await quotaOf(stack, subject)).toMatchObject({ used: 2, held: 0 });
  });
});
