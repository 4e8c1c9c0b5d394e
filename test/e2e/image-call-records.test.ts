/**
 * An image call's task record travels from the images service to the tasks service on vision.image-calls
 * (the images outbox, the in-process bus, the tasks consumer); a read right after the 201 finds the call
 * while its record is still on the way, with the view the stored record gives.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { RunningImages } from '@vision/images';
import type { TasksService } from '@vision/tasks';
import { MEDIA, startStandaloneStack, type TestStack } from '../helpers/stack';

const OWNER = 'e2e-records-owner-0123456789';
const OTHER = 'e2e-records-other-0123456789';
const JPG = path.join(MEDIA, 'images', 'none_bedroom_coco632.jpg');
const PNG = path.join(MEDIA, 'images', 'boat_sailboat_kodim06.png');

async function until<T>(fn: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('image call records', () => {
  let stack: TestStack;
  let images: RunningImages;
  let tasks: TasksService;
  beforeAll(async () => {
    stack = await startStandaloneStack({ keys: `${OWNER}:owner,${OTHER}:other` });
    images = stack.standalone!.services.images as RunningImages;
    tasks = stack.standalone!.services.tasks as TasksService;
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  const detect = (idem = randomUUID()) => {
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append('files', new Blob([readFileSync(JPG)]), 'a.jpg');
    form.append('files', new Blob([readFileSync(PNG)]), 'b.png');
    return stack.api('POST', '/v1/vision/image-detections', {
      key: OWNER,
      headers: { 'idempotency-key': idem },
      body: form,
    });
  };
  const read = (id: string, key = OWNER) => stack.api('GET', `/v1/vision/tasks/${id}`, { key });

  it('reaches the tasks store through the bus, with the call and its summary', async () => {
    const idem = randomUUID();
    const r = await detect(idem);
    expect(r.status).toBe(201);
    const stored = await until(() => tasks.store.get(r.body.task_id));
    expect(stored).toMatchObject({
      task_id: r.body.task_id,
      subject: 'owner',
      kind: 'image',
      request_id: idem,
      scene_code: 'person_vehicle',
      status: 'succeeded',
      results_summary: { images: 2, succeeded: 2, failed: 0 },
    });
    // The images service's record names the same instants the stored task has.
    const call = await images.parts.calls.taskRecord('owner', r.body.task_id);
    expect(call).toMatchObject({
      created_at: stored.created_at.toISOString(),
      updated_at: stored.updated_at.toISOString(),
    });
  }, 60_000);

  it('is read right after the 201 while the record is on the way, with the view the stored record gives', async () => {
    // The relay is held: the record stays in the images outbox, and tasks has not got it.
    await images.parts.relay.stop();
    let r;
    let early;
    try {
      r = await detect();
      expect(r.status).toBe(201);
      early = await read(r.body.task_id);
      expect(await tasks.store.get(r.body.task_id)).toBeUndefined();
      // Only the caller finds it; an id nobody has stays 404.
      expect((await read(r.body.task_id, OTHER)).status).toBe(404);
      expect((await read(randomUUID())).status).toBe(404);
    } finally {
      images.parts.relay.start();
    }
    expect(early.status).toBe(200);
    expect(early.body).toMatchObject({ task_id: r.body.task_id, kind: 'image', status: 'succeeded' });
    await until(() => tasks.store.get(r.body.task_id));
    const late = await read(r.body.task_id);
    expect(late.status).toBe(200);
    expect(late.body).toEqual(early.body);
  }, 60_000);
});
