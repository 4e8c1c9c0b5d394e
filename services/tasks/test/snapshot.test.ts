import { randomUUID } from 'node:crypto';
import { type Stack, startClipServer, startStack } from './harness';

let stack: Stack;
let clips: Awaited<ReturnType<typeof startClipServer>>;

beforeAll(async () => {
  clips = await startClipServer();
  stack = await startStack({ env: { TASKS_MAX_ACTIVE: '3' } });
});
afterAll(async () => {
  await stack.close();
  await clips.close();
});

const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 0xff, 0xd9]);
const snapshot = (subject: string, id: string) =>
  stack.http.get(`/v1/vision/tasks/${id}/snapshot`).use(stack.as(subject));

describe('GET /v1/vision/tasks/{id}/snapshot', () => {
  test("answers a running task's latest picture to its owner only, 409 before the first frame and once it ended", async () => {
    const created = await stack.http
      .post('/v1/vision/tasks')
      .use(stack.as('alice'))
      .set('Idempotency-Key', randomUUID())
      .send({
        scene_code: 'person_vehicle',
        stream_url: clips.url('person_bicycle_car_parkinglot_intel.mp4'),
      });
    expect(created.status).toBe(201);
    const id = created.body.task_id as string;

    const before = await snapshot('alice', id);
    expect([before.status, before.body.error.code]).toEqual([409, 'OP-TASK-NO-PICTURE']);

    stack.inference.stills.set(id, { jpeg: JPEG, frameTimeMs: 1200 });
    const got = await snapshot('alice', id).buffer(true);
    expect(got.status).toBe(200);
    expect(got.headers['content-type']).toBe('image/jpeg');
    expect(got.headers['cache-control']).toBe('no-store');
    expect(got.headers['x-frame-time-ms']).toBe('1200');
    expect(Buffer.compare(got.body as Buffer, JPEG)).toBe(0);

    // An unknown query parameter answers as on every other route.
    const query = await stack.http.get(`/v1/vision/tasks/${id}/snapshot?foo=bar`).use(stack.as('alice'));
    expect(query.status).toBe(400);
    expect(query.body.error.details).toEqual({ reason: 'unknown_field', field: 'foo' });

    // Another subject's task is unknown to it; an unknown id too.
    expect((await snapshot('bob', id)).status).toBe(404);
    expect((await snapshot('alice', randomUUID())).status).toBe(404);

    // The backend failing is a 503, not a 500 and not a picture.
    stack.inference.behaviour.still = 'error500';
    const down = await snapshot('alice', id);
    expect([down.status, down.body.error.code]).toEqual([503, 'OP-SYS-UNAVAILABLE']);
    stack.inference.behaviour.still = undefined;

    const stopped = await stack.http.post(`/v1/vision/tasks/${id}/stop`).use(stack.as('alice'));
    expect(stopped.status).toBe(200);
    const after = await snapshot('alice', id);
    expect([after.status, after.body.error.code]).toEqual([409, 'OP-TASK-NO-PICTURE']);
  });
});
