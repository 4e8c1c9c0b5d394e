import { readFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { DistributedStack } from '../helpers/distributed';
import { MEDIA, settledQuota } from '../helpers/stack';
import {
  client,
  clip,
  describeDistributed,
  expectUnavailable,
  KEY,
  startFaultStack,
  waitFor,
} from './support';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

const IMAGE = path.join(MEDIA, 'images', 'street_people_car_coco9891.jpg');

describeDistributed('fault: the S3 server is down', () => {
  let stack: DistributedStack;
  beforeAll(async () => {
    stack = await startFaultStack();
  }, 180_000);
  afterAll(async () => {
    await stack?.startServer('s3').catch(() => undefined);
    await stack?.close();
  });

  const detect = (c: ReturnType<typeof client>) => {
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append('files', new Blob([readFileSync(IMAGE)]), 'a.jpg');
    form.append('files', new Blob([readFileSync(IMAGE)]), 'b.jpg');
    return c.api('POST', '/v1/vision/image-detections', {
      headers: { 'idempotency-key': randomUUID() },
      body: form,
    });
  };
  const usage = async () => {
    const q = await settledQuota(stack, KEY);
    return { video: q.video_tasks.used, images: q.images.used };
  };

  it('answers uploads with 503 OP-SYS-UNAVAILABLE (or per-image failures) and charges nothing', async () => {
    const c = client(stack);
    const ok = await detect(c);
    expect(ok.status).toBe(201);
    const before = await usage();
    expect(before.images).toBe(2);

    await stack.stopServer('s3');
    const upload = await c.upload(clip('person_bicycle_car_parkinglot_intel.mp4'));
    expectUnavailable(upload, ['OP-SYS-UNAVAILABLE']);
    const images = await detect(c);
    if (images.status === 201 || images.status === 200) {
      for (const r of images.body.results) expect(r.status).toBe('failed');
    } else {
      expectUnavailable(images, ['OP-SYS-UNAVAILABLE']);
    }
    expect(await usage()).toEqual(before);
    expect((await c.tasks()).length).toBe(0);

    await stack.startServer('s3');
    const created = await waitFor(
      'an upload to be accepted again',
      async () => {
        const r = await c.upload(clip('person_bicycle_car_parkinglot_intel.mp4'));
        return r.status === 201 ? r : undefined;
      },
      60_000,
    );
    expect((await c.waitForStatus(created.body.task_id, ['succeeded', 'failed'])).status).toBe('succeeded');
    expect((await detect(c)).status).toBe(201);
    expect(await usage()).toEqual({ video: before.video + 1, images: before.images + 2 });
  }, 180_000);
});
