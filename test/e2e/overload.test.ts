import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { DistributedStackOptions } from '../helpers/distributed';
import { type Sample, matching, scrape, total } from '../helpers/scrape';
import { MEDIA, settledQuota, startStack, type TestStack } from '../helpers/stack';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

interface Result {
  key: string;
  idem: string;
  status: number;
  ms: number;
  retryAfter?: string;
  reason?: string;
  error?: string;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { openLoop, send, imageBody } = require('../../scripts/overload/open-loop') as {
  openLoop(o: {
    url: string;
    rate: number;
    seconds: number;
    keys: string[];
    image: Buffer;
  }): Promise<Result[]>;
  send(
    agent: undefined,
    url: string,
    key: string,
    idem: string,
    body: { body: Buffer; contentType: string },
    timeoutMs: number,
  ): Promise<Result>;
  imageBody(image: Buffer): { body: Buffer; contentType: string };
};

const KEYS = Array.from({ length: 5 }, (_, i) => `overload-key-${i}-0123456789`);
const IMAGE = readFileSync(path.join(MEDIA, 'images', 'street_people_car_coco9891.jpg'));

/**
 * Past capacity the service refuses the excess at once instead of queueing it: an open-loop load well
 * above what it can serve gets 201s and 503s with Retry-After, never a reset or a silent timeout; the
 * quota charges exactly the 201s; a refused call's key is served normally afterwards. (How fast, and how
 * much is served, is bench/overload.bench.js's business.)
 */
describe('overload: the excess is refused at once, nothing is lost', () => {
  let stack: TestStack;
  let results: Result[];
  /** The metrics of the stack before and after the load. */
  let before: Sample[];
  let after: Sample[];
  beforeAll(async () => {
    const options: DistributedStackOptions = {
      keys: KEYS.map((k, i) => `${k}:overload-${i}`).join(','),
      env: {
        // A capacity of one call at a time per images replica, and no waiting for a turn: any call that
        // arrives while another runs is refused, so a modest rate exceeds it on any machine.
        IMAGES_MAX_IN_FLIGHT: '1',
        IMAGES_QUEUE_MAX_WAIT_MS: '0',
        QUOTA_IMAGE_DAILY: '100000',
        GATEWAY_QPS: '1000',
        GATEWAY_BURST: '1000',
        GATEWAY_CONCURRENCY: '1000',
      },
      // Distributed: two images replicas behind one address share one inference (standalone ignores it).
      replicas: { images: 2 },
    };
    stack = await startStack(options);
    before = await scrape(stack);
    // Bursts of calls from five subjects, each within its own limits: 50 a second for 4 s, every call
    // sent whatever the answers.
    results = await openLoop({ url: stack.url, rate: 50, seconds: 4, keys: KEYS, image: IMAGE });
    after = await scrape(stack);
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('answers every call over HTTP: no reset, no timeout', () => {
    expect(results.filter((r) => r.status === 0).map((r) => r.error)).toEqual([]);
  });

  it('serves some and refuses the rest with 503 overloaded and a Retry-After', () => {
    const served = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 503);
    expect(served.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    expect(served.length + refused.length).toBe(results.length);
    for (const r of refused) {
      expect(['overloaded', 'deadline_exceeded']).toContain(r.reason);
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    }
  });

  it('charges exactly the calls answered 201, per subject', async () => {
    for (const key of KEYS) {
      const q = await settledQuota(stack, key);
      const served = results.filter((r) => r.key === key && r.status === 201).length;
      expect({ key, used: q.images.used, held: q.images.held }).toEqual({
        key,
        used: served,
        held: 0,
      });
    }
  });

  it("counts every refusal by reason, every admitted call's wait, and shows what runs now", () => {
    const grew = (name: string, labels: Record<string, string>) =>
      total(after, name, labels) - total(before, name, labels);
    const served = results.filter((r) => r.status === 201).length;
    const refused = results.filter((r) => r.status === 503).length;
    // Each refused call was counted once, by the queue that refused it (the gateway's at the door, or the
    // images service's behind it: with one call at a time there, inference's detect queue never fills).
    expect(grew('vision_admission_shed_total', {})).toBe(refused);
    expect(grew('vision_admission_shed_total', { reason: 'overloaded' })).toBeGreaterThan(0);
    // Each served call waited its turn once, and so did each of its images at inference.
    expect(
      grew('vision_admission_queue_wait_seconds_count', { queue: 'image_calls' }),
    ).toBeGreaterThanOrEqual(served);
    expect(grew('vision_admission_queue_wait_seconds_count', { queue: 'detections' })).toBeGreaterThanOrEqual(
      served,
    );
    // The in-flight gauge is exported per queue, and nothing is left running once every call was answered.
    for (const queue of ['image_calls', 'detections']) {
      expect(matching(after, 'vision_admission_in_flight', { queue }).length).toBeGreaterThan(0);
      expect(total(after, 'vision_admission_in_flight', { queue })).toBe(0);
    }
  });

  it('serves a refused call when it is sent again with the same key', async () => {
    const refused = results.find((r) => r.status === 503)!;
    const again = await send(undefined, stack.url, refused.key, refused.idem, imageBody(IMAGE), 30_000);
    expect(again.status).toBe(201);
  });
});
