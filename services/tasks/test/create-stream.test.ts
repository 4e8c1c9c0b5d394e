import { randomUUID } from 'node:crypto';
import { TOPICS, type IncomingMessage, REASON } from '@vision/shared';
import { type Stack, quotaUsed, startClipServer, startStack, waitFor } from './harness';

let stack: Stack;
let clips: Awaited<ReturnType<typeof startClipServer>>;
const events: IncomingMessage[] = [];

beforeAll(async () => {
  clips = await startClipServer();
  stack = await startStack({ env: { TASKS_MAX_ACTIVE: '3' } });
  await stack.bus.subscribe({
    topic: TOPICS.taskEvents,
    group: 'test',
    fromBeginning: true,
    handleBatch: async (m) => {
      events.push(...m);
    },
  });
});
afterAll(async () => {
  await stack.close();
  await clips.close();
});

const create = (subject: string, key: string, body: unknown) =>
  stack.http
    .post('/v1/vision/tasks')
    .use(stack.as(subject))
    .set('Idempotency-Key', key)
    .send(body as object);

describe('POST /v1/vision/tasks', () => {
  test('creates a running task, charges once, replays with 200, refuses another meaning', async () => {
    const key = randomUUID();
    const body = {
      scene_code: 'person_vehicle',
      stream_url: clips.url('person_bicycle_car_parkinglot_intel.mp4'),
    };
    const r = await create('alice', key, body);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      request_id: key,
      scene_code: 'person_vehicle',
      status: 'running',
      kind: 'video',
    });
    expect(Object.keys(r.body)).not.toContain('stream_url');
    expect(Date.parse(r.body.result_expires_at) - Date.parse(r.body.created_at)).toBe(90 * 86_400_000);
    expect(r.headers['ratelimit-policy']).toBe('"video-daily";q=5;w=86400');
    expect(r.headers.ratelimit).toMatch(/^"video-daily";r=4;t=\d+$/);
    expect(stack.inference.jobs.get(r.body.task_id)?.source).toEqual({
      type: 'stream',
      url: body.stream_url,
    });

    const again = await create('alice', key, body);
    expect(again.status).toBe(200);
    expect(again.body.task_id).toBe(r.body.task_id);
    expect(await quotaUsed(stack, 'alice')).toBe(1);

    const other = await create('alice', key, { ...body, scene_code: 'ship' });
    expect(other.status).toBe(400);
    expect(other.body.error).toMatchObject({
      code: 'OP-TASK-REQUEST-INVALID',
      details: { reason: REASON.idempotency_mismatch },
    });

    const got = await stack.http.get(`/v1/vision/tasks/${r.body.task_id}`).use(stack.as('alice'));
    expect(got.status).toBe(200);
    expect(got.body).toEqual(again.body);
    const foreign = await stack.http.get(`/v1/vision/tasks/${r.body.task_id}`).use(stack.as('mallory'));
    expect(foreign.status).toBe(404);

    const created = await waitFor(async () => events.find((e) => e.key === r.body.task_id));
    expect(created.value).toMatchObject({
      schema: 1,
      type: 'task.created',
      task_id: r.body.task_id,
      subject: 'alice',
      kind: 'video',
      status: 'running',
      business_threshold: 0.8,
      lower_bound: 0.25,
    });
    expect(JSON.stringify(events)).not.toContain('stream_url');
  });

  test('the same key for another subject is a separate request', async () => {
    const key = randomUUID();
    const body = { scene_code: 'ship', stream_url: clips.url('boats_kodak_pan_synth.mp4') };
    const a = await create('kim', key, body);
    const b = await create('lee', key, body);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(a.body.task_id).not.toBe(b.body.task_id);
  });

  test.each([
    [{ 'Idempotency-Key': '' }, REASON.idempotency_key],
    [{ 'Idempotency-Key': 'not-a-uuid' }, REASON.idempotency_key],
  ])('header %p -> %s', async (headers, reason) => {
    const r = await stack.http
      .post('/v1/vision/tasks')
      .use(stack.as('bob'))
      .set(headers)
      .send({ scene_code: 'ship', stream_url: clips.url('boats_kodak_pan_synth.mp4') });
    expect(r.status).toBe(400);
    expect(r.body.error.details.reason).toBe(reason);
  });

  test.each<[unknown, string, string]>([
    [
      { scene_code: 'ship', stream_url: 'http://x/y', extra: 1 },
      'OP-TASK-REQUEST-INVALID',
      REASON.unknown_field,
    ],
    [{ scene_code: 'ship' }, 'OP-TASK-REQUEST-INVALID', REASON.stream_url_invalid],
    [{ scene_code: 'ship', stream_url: '' }, 'OP-TASK-REQUEST-INVALID', REASON.stream_url_invalid],
    [
      { scene_code: 'ship', stream_url: 'ftp://example.com/a' },
      'OP-TASK-REQUEST-INVALID',
      'stream_url_invalid',
    ],
    [
      { scene_code: 'ship', stream_url: 'http://169.254.169.254/latest' },
      'OP-TASK-REQUEST-INVALID',
      'stream_url_invalid',
    ],
    [
      { scene_code: 'ship', stream_url: 'http://127.0.0.1:1/none.mp4' },
      'OP-TASK-REQUEST-INVALID',
      'stream_unreachable',
    ],
    [
      { scene_code: 'ship', stream_url: 'http://no-such-host.invalid/x' },
      'OP-TASK-REQUEST-INVALID',
      'stream_unreachable',
    ],
    [{ scene_code: 'fire_smoke', stream_url: 'http://127.0.0.1/x' }, 'OP-TASK-SCENE-UNAVAILABLE', ''],
    [{ scene_code: 'volcano', stream_url: 'http://127.0.0.1/x' }, 'OP-TASK-SCENE-UNAVAILABLE', ''],
  ])('body %p -> %s %s, no task and no charge', async (body, code, reason) => {
    const r = await create('carol', randomUUID(), body);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe(code);
    if (reason) expect(r.body.error.details.reason).toBe(reason);
    const list = await stack.http.get('/v1/vision/tasks').use(stack.as('carol'));
    expect(list.body.items).toEqual([]);
    expect(await quotaUsed(stack, 'carol')).toBe(0);
  });

  test('a served file that is not a video and a redirect to metadata are refused', async () => {
    const notVideo = await create('carol', randomUUID(), {
      scene_code: 'ship',
      stream_url: clips.url('not-video.txt'),
    });
    expect(notVideo.body.error.details.reason).toBe(REASON.stream_unreachable);
    const redirect = await create('carol', randomUUID(), {
      scene_code: 'ship',
      stream_url: clips.url('redirect-to-metadata'),
    });
    expect(redirect.body.error.details.reason).toBe(REASON.stream_url_invalid);
    expect(await quotaUsed(stack, 'carol')).toBe(0);
  });

  test('20 concurrent creates with one key: one task, one charge, all see it', async () => {
    const key = randomUUID();
    const body = { scene_code: 'ship', stream_url: clips.url('boats_kodak_pan_synth.mp4') };
    const answers = await Promise.all(Array.from({ length: 20 }, () => create('dave', key, body)));
    const statuses = answers.map((a) => a.status).sort();
    if (statuses.some((s) => s !== 200 && s !== 201)) console.log(answers.map((a) => [a.status, a.body]));
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(19);
    expect(new Set(answers.map((a) => a.body.task_id)).size).toBe(1);
    expect(await quotaUsed(stack, 'dave')).toBe(1);
    const list = await stack.http.get('/v1/vision/tasks').use(stack.as('dave'));
    expect(list.body.items).toHaveLength(1);
  });

  test('active-task limit: the fourth concurrent task is refused without a charge', async () => {
    const url = clips.url('boats_kodak_pan_synth.mp4');
    for (let i = 0; i < 3; i++)
      expect((await create('erin', randomUUID(), { scene_code: 'ship', stream_url: url })).status).toBe(201);
    const r = await create('erin', randomUUID(), { scene_code: 'ship', stream_url: url });
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe('OP-QUOTA-RATE-LIMITED');
    expect(await quotaUsed(stack, 'erin')).toBe(3);
  });

  test('backend rejection: task refunded, quota returned', async () => {
    stack.inference.behaviour.submit = 'reject';
    try {
      const r = await create('fay', randomUUID(), {
        scene_code: 'ship',
        stream_url: clips.url('boats_kodak_pan_synth.mp4'),
      });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ status: 'refunded' });
      expect(r.body.reason).toContain('backend_rejected');
      expect(await quotaUsed(stack, 'fay')).toBe(0);
    } finally {
      stack.inference.behaviour.submit = 'accept';
    }
  });

  test('backend over capacity: 503, nothing left, nothing charged', async () => {
    stack.inference.behaviour.submit = 'over_capacity';
    try {
      const r = await create('gus', randomUUID(), {
        scene_code: 'ship',
        stream_url: clips.url('boats_kodak_pan_synth.mp4'),
      });
      expect(r.status).toBe(503);
      expect(r.body.error.code).toBe('OP-TASK-UPSTREAM-DOWN');
      expect(await quotaUsed(stack, 'gus')).toBe(0);
      expect((await stack.http.get('/v1/vision/tasks').use(stack.as('gus'))).body.items).toEqual([]);
    } finally {
      stack.inference.behaviour.submit = 'accept';
    }
  });

  test('scene list merges inference with names and the business threshold', async () => {
    const r = await stack.http.get('/api/op/v1/scenes').use(stack.as('alice'));
    expect(r.status).toBe(200);
    const fire = r.body.scenes.find((s: { scene_code: string }) => s.scene_code === 'fire_smoke');
    expect(fire).toMatchObject({
      enabled: false,
      reason: 'model not installed',
      name: 'Fire and smoke',
      default_business_threshold: 0.8,
    });
    expect(r.body.scenes).toHaveLength(5);
  });

  test('history: newest first, cursor paging, filters', async () => {
    const page1 = await stack.http.get('/v1/vision/tasks?limit=2').use(stack.as('erin'));
    expect(page1.body.items).toHaveLength(2);
    expect(page1.body.next_cursor).not.toBe('');
    const page2 = await stack.http
      .get(`/v1/vision/tasks?limit=2&cursor=${page1.body.next_cursor}`)
      .use(stack.as('erin'));
    expect(page2.body.items).toHaveLength(1);
    expect(page2.body.next_cursor).toBe('');
    const all = [...page1.body.items, ...page2.body.items];
    expect(new Set(all.map((t: { task_id: string }) => t.task_id)).size).toBe(3);
    const created = all.map((t: { created_at: string }) => t.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    expect(
      (await stack.http.get('/v1/vision/tasks?status=succeeded').use(stack.as('erin'))).body.items,
    ).toEqual([]);
    expect(
      (await stack.http.get('/v1/vision/tasks?kind=video').use(stack.as('erin'))).body.items,
    ).toHaveLength(3);
    expect((await stack.http.get('/v1/vision/tasks?status=bogus').use(stack.as('erin'))).status).toBe(400);
    expect((await stack.http.get('/v1/vision/tasks?cursor=zzz').use(stack.as('erin'))).status).toBe(400);
  });
});
