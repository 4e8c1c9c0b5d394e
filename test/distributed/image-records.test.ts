import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { DistributedStack } from '../helpers/distributed';
import { MEDIA } from '../helpers/stack';
import { client, describeDistributed, startFaultStack, waitFor } from './support';

const JPG = path.join(MEDIA, 'images', 'none_bedroom_coco632.jpg');

describeDistributed('image call records over Kafka (vision.image-calls)', () => {
  let stack: DistributedStack;
  beforeAll(async () => {
    stack = await startFaultStack();
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  const detect = (c: ReturnType<typeof client>, idem = randomUUID()) => {
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append('files', new Blob([readFileSync(JPG)]), 'a.jpg');
    return c.api('POST', '/v1/vision/image-detections', { headers: { 'idempotency-key': idem }, body: form });
  };
  /** The image calls the tasks service has stored (the list shows stored tasks only). */
  const listed = async (c: ReturnType<typeof client>, taskId: string) => {
    const r = await c.api('GET', '/v1/vision/tasks?kind=image&limit=100');
    return r.status === 200 && r.body.items.some((t: { task_id: string }) => t.task_id === taskId)
      ? true
      : undefined;
  };

  it('a call is found right after its 201', async () => {
    const c = client(stack);
    const r = await detect(c);
    expect(r.status).toBe(201);
    const got = await c.task(r.body.task_id);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ task_id: r.body.task_id, kind: 'image', status: 'succeeded' });
    await waitFor('the record in the tasks store', () => listed(c, r.body.task_id), 30_000);
    expect((await c.task(r.body.task_id)).body).toEqual(got.body);
  }, 60_000);

  it('is answered 201 while the tasks service is down; the record reaches tasks once it is back', async () => {
    const c = client(stack);
    await stack.kill('tasks', { signal: 'SIGKILL' });
    let r;
    try {
      r = await detect(c);
    } finally {
      await stack.restart('tasks');
    }
    expect(r.status).toBe(201);
    await waitFor('the record in the tasks store', () => listed(c, r.body.task_id), 60_000);
    const got = await c.task(r.body.task_id);
    expect(got.body).toMatchObject({ task_id: r.body.task_id, kind: 'image', status: 'succeeded' });
  }, 120_000);
});
