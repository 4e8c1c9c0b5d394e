/**
 * Replays are costly work, admitted like any other: sixteen replays at once with the costliest rule set the API
 * accepts, paged to their end, while another subject reads its quota and detects an image. Every replay answer is
 * a page (within its max_frames) or a refusal that says when to retry, never a 401 for a valid key; the replays
 * ran in their turn of the `replays` queue and the gateway's door; the other subject is served throughout and
 * the shared inference breaker stays closed.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { heaviestRules, PARKING_LOT } from '../helpers/places';
import { scrape, total } from '../helpers/scrape';
import { MEDIA, startStack, type TestStack } from '../helpers/stack';
import { until } from '../helpers/webhooks';

const HEAVY = 'replay-heavy-key-0123456789';
const OTHER = 'replay-other-key-0123456789';
const RULES = heaviestRules(['car', 'person', 'truck', 'bicycle']);
const REPLAYS = 16;
const MAX_FRAMES = 5;

describe('sixteen heavy replays at once', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({
      keys: `${HEAVY}:replay-heavy,${OTHER}:replay-other`,
      env: { TASKS_POLL_INTERVAL_MS: '300' },
    });
  }, 300_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('answer pages or refusals with Retry-After, never 401, while another subject is served', async () => {
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append('file', new Blob([readFileSync(PARKING_LOT)]), 'lot.mp4');
    const created = await stack.api('POST', '/v1/vision/video-tasks', {
      key: HEAVY,
      headers: { 'idempotency-key': randomUUID() },
      body: form,
    });
    expect(created.status).toBe(201);
    const taskId = created.body.task_id as string;
    await until(
      'the task ended',
      async () => {
        const r = await stack.api('GET', `/v1/vision/tasks/${taskId}`, { key: HEAVY });
        return r.body.status === 'succeeded' ? true : undefined;
      },
      240_000,
    );
    const before = await scrape(stack);

    const statuses: number[] = [];
    const pagesOf = async (): Promise<number> => {
      let cursor: string | undefined;
      let frames = 0;
      for (let attempt = 0; attempt < 400; attempt++) {
        const r = await stack.api('POST', `/v1/vision/tasks/${taskId}/analytics/replay`, {
          key: HEAVY,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...RULES, max_frames: MAX_FRAMES, ...(cursor ? { cursor } : {}) }),
        });
        statuses.push(r.status);
        if (r.status !== 200) {
          // A refusal for load says when to come back.
          expect([429, 503]).toContain(r.status);
          const wait = Number(r.headers.get('retry-after'));
          expect(wait).toBeGreaterThan(0);
          await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 2) * 1000));
          continue;
        }
        expect(r.body.frames).toBeLessThanOrEqual(MAX_FRAMES);
        frames += r.body.frames as number;
        cursor = r.body.next_cursor as string;
        if (cursor === '') return frames;
      }
      throw new Error('the replay did not end');
    };
    const replays = Promise.all(Array.from({ length: REPLAYS }, pagesOf));

    // Meanwhile the other subject reads its quota and detects an image.
    let running = true;
    const quotas: number[] = [];
    const reader = (async () => {
      while (running) {
        quotas.push((await stack.api('GET', '/v1/vision/quota', { key: OTHER })).status);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const image = new FormData();
    image.append(
      'files',
      new Blob([readFileSync(path.join(MEDIA, 'images', 'street_people_car_coco9891.jpg'))]),
      'street.jpg',
    );
    const detected = await stack.api('POST', '/v1/vision/image-detections', {
      key: OTHER,
      headers: { 'idempotency-key': randomUUID() },
      body: image,
    });
    const frames = await replays;
    running = false;
    await reader;

    expect(statuses).not.toContain(401);
    expect(new Set(frames).size).toBe(1);
    expect(frames[0]).toBeGreaterThan(MAX_FRAMES);
    expect(detected.status).toBe(201);
    expect(quotas.length).toBeGreaterThan(0);
    expect(quotas.every((s) => s === 200)).toBe(true);

    const after = await scrape(stack);
    const grew = (name: string, labels: Record<string, string>) =>
      total(after, name, labels) - total(before, name, labels);
    const pages = statuses.filter((s) => s === 200).length;
    // Every page ran in its turn of the replays queue, after the gateway's door admitted it.
    expect(grew('vision_admission_queue_wait_seconds_count', { queue: 'replays' })).toBe(pages);
    expect(grew('vision_admission_queue_wait_seconds_count', { queue: 'gateway_replays' })).toBeGreaterThan(
      0,
    );
    expect(total(after, 'vision_breaker_state', { state: 'open' })).toBe(0);
  }, 600_000);
});
